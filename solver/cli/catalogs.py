"""The catalogue a ``solve`` command plans with: the shipped one, with --model-config, --cells and --gpu-memory
(and --gpu-interconnect)."""

from __future__ import annotations

import argparse
import contextlib
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from solver.tables import QueryError, and_joined, brief, cut, with_own_hint

if TYPE_CHECKING:
    from solver.tables import Catalog, GpuType, Interconnect, Model


EVERY_WORDS = frozenset({"all", "every", "*"})
"""Names (in any case) that ask for every GPU type or model, which none has: their refusal says what answers each."""


def _every_hint(name: str, every: str) -> str:
    """What an unknown `name`'s refusal adds where it asks for all (`EVERY_WORDS`): `every`, the words that say what
    answers each ("" for none)."""
    return f"; {every}" if every and name.strip().casefold() in EVERY_WORDS else ""


class CommandCatalog(NamedTuple):
    """The catalogue a command plans with (`catalog_with`), the name of the model it added ("" without one), and
    each --cells file with the GPU type it gave, as read (once: a pipe reads once)."""

    catalog: Catalog
    added: str
    cells: tuple[tuple[Path, GpuType], ...]


def given_gpus(gpu: str | Sequence[str] | None) -> tuple[str, ...]:
    """The names --gpu gives: its one (a command that takes one), its several (`solver.cli.argtypes.gpu_names`'s), or
    none."""
    return (gpu,) if isinstance(gpu, str) else tuple(gpu or ())


def catalog_with(model: Model | None, gpu: str | Sequence[str] | None = None,
                 memory: tuple[int | None, int | None] | None = None,
                 cells: Sequence[Path] = (), start: Catalog | None = None,
                 keep_contradictions: bool = False, join: bool = True,
                 interconnect: Interconnect | None = None, count_option: str = "--gpus",
                 every: str = "") -> CommandCatalog:
    """The shipped catalogue (or `start`), with `model` added (--model-config's), the tables of the --cells
    files (which may name it; with `keep_contradictions`, even where they contradict themselves or the tables, to
    list them; without `join`, their GPU types alone, as `solve calibrate` reads them: `read_cells_files`),
    and the GPU type that --gpu NAME --gpu-memory SIZE describes (`gpu`: --gpu's name, or its names, of which that is
    the one the catalogue lacks), with --gpu-interconnect's `interconnect` where given; and that model's name as
    the catalogue gives it ("" without one); and the GPU type each --cells file gave (`CommandCatalog`). An unknown
    --gpu name that is a known one with a count (``a100x4``) is refused with the options that give them apart, the
    count to `count_option`; one that asks for all (``--gpu all``) with `every`'s words, where given (what answers
    each GPU type)."""
    from solver.rules import COMMAND_OPTIONS
    from solver.tables import OWN_GPU_HINT, check_once, described_gpu_type, load_catalog, read_cells_files
    catalog, added = start or load_catalog(), ""
    if model is not None:
        catalog = catalog.with_model(model)
        added = catalog.models[-1].name  # with_model adds it last, renamed if it only borrows a name
    check_once("--cells", cells)
    catalog, loaded = read_cells_files(catalog, cells, join=join, keep_contradictions=keep_contradictions,
                                       flag="--cells ", file_readers=COMMAND_OPTIONS.file_readers)
    names = given_gpus(gpu)
    if memory is not None and not names:
        raise QueryError("--gpu-memory gives the memory of the GPU type --gpu NAME names: give --gpu too")
    if interconnect is not None and memory is None:
        raise QueryError("--gpu-interconnect states the interconnect of the GPU type --gpu NAME --gpu-memory SIZE "
                         "describes: give --gpu-memory too, or drop it (the catalogue's GPU types state theirs)")
    unknown: list[tuple[str, QueryError]] = []
    for name in names:
        try:
            catalog.gpu(name)
        except QueryError as error:
            unknown.append((name, error))
    for name, _ in unknown if not isinstance(gpu, str) else ():  # where one is asked for, catalog.gpu refuses them
        _refuse_names_in_one_word(catalog, names, name)
    if memory is None and unknown:
        _refuse_a_count(catalog, names, unknown[0][0], count_option)
        raise QueryError(with_own_hint(unknown[0][1], OWN_GPU_HINT.format('--gpu-memory SIZE'))
                         + _every_hint(unknown[0][0], every))
    if memory is not None:
        if len(unknown) > 1:
            raise QueryError(f"--gpu names {len(unknown)} GPU types the catalogue lacks "
                             f"({', '.join(brief(name) for name, _ in unknown)}), and --gpu-memory gives the memory of "
                             "one: name one GPU type of your own, the others from the catalogue")
        if not unknown:
            known = list({gpu_type.name: gpu_type for gpu_type in map(catalog.gpu, names)}.values())  # each once
            listed = ", ".join(f"{gpu_type.name} ({gpu_type.memory_gib:.1f} GiB)" for gpu_type in known)
            whose = "a GPU type whose memory is" if len(known) == 1 else "GPU types whose memory is each"
            sized = None
            if len(known) == 1:  # one card named: the catalogue's of that size, where it has one
                with contextlib.suppress(QueryError, ValueError):  # a size no GPU has: no catalogue type to name
                    sized = catalog.sized_gpu(names[0], described_gpu_type(names[0], *memory).memory_gb)
            instead = "" if sized is None else f"for the {sized.memory_gb} GB card give --gpu {sized.name}; else "
            raise QueryError(f"--gpu {cut(','.join(names))} names {listed}, {whose} known: {instead}drop --gpu-memory, "
                             "or give your GPU type a name of its own")
        catalog = catalog.with_gpu_types([described_gpu_type(unknown[0][0], *memory, source="--gpu-memory",
                                                             interconnect=interconnect,
                                                             interconnect_source="--gpu-interconnect")])
    return CommandCatalog(catalog, added, loaded)


def _refuse_a_count(catalog: Catalog, names: Sequence[str], name: str, count_option: str) -> None:
    """`QueryError` where `name`, of --gpu's `names`, which the catalogue lacks, is a GPU type it has with a count
    (``a100x4``, `Catalog.counted_gpu`), naming the options that give them apart (``--gpu a100 --gpus 4``); nothing
    otherwise."""
    if (found := catalog.counted_gpu(name)) is not None:
        apart = ",".join(found.name if listed == name else listed for listed in names)
        raise QueryError(found.refused("--gpu ", f"--gpu {apart} {count_option} {found.gpus}"))


def _refuse_names_in_one_word(catalog: Catalog, names: Sequence[str], name: str) -> None:
    """`QueryError` where `name`, of --gpu's `names` (a list --gpu takes), which the catalogue lacks, is GPU types it
    has apart by spaces or semicolons in one word (`Catalog.gpus_in_one_word`: ``'h200 mi300x'``): the list as --gpu
    takes it; nothing otherwise."""
    if parts := catalog.gpus_in_one_word(name):
        listed = ",".join(",".join(parts) if given == name else given for given in names)
        found = and_joined([catalog.gpu(part).name for part in parts])
        raise QueryError(f"--gpu {brief(name)} names {len(parts)} GPU types in one word ({found}): separate them "
                         f"by commas, --gpu {listed}")


def check_model_flags(args: argparse.Namespace, ways: str, given: bool = False) -> None:
    """One way to name the model: --model or --model-config (or, with `given`, another the caller has). Beside
    --cells, the refusal says what plans the catalogue's model where the cells also name one of your own, which they
    take --model-config for: cells of its own."""
    if args.model is not None and args.model_config is not None:
        cells = (" (cells that name a model of your own are read with its --model-config, which then is the model "
                 "planned: for --model's, give its cells in a file that names no model of yours)"
                 if args.cells else "")
        raise QueryError(f"--model and --model-config both name the model: give one{cells}")
    if args.model is None and args.model_config is None and not given:
        raise QueryError(f"which model? give {ways}")


def catalogue_model(catalog: Catalog, name: str, listed: str = "", every: str = "") -> Model:
    """The model `name` names in `catalog`; `QueryError` for an unknown name, which also says how to give a model
    the catalogue lacks (--model-config, with `name` where it is a checkpoint's folder or config.json:
    `own_model_option`), and for one that asks for all (``all``) `every`'s words where given (what answers each
    model), or for a list of models (``8B,14B``), `listed` after it where given (the list in place of ``{}``: the
    command that compares them)."""
    from solver.tables import OWN_MODEL_HINT, ListedNamesError, own_model_option
    try:
        return catalog.model(name)
    except ListedNamesError as error:
        compared = "; " + listed.format(name.replace(" ", "")) if listed else ""
        raise QueryError(f"{error}{compared}") from None
    except QueryError as error:
        option = own_model_option(shlex.quote(name), Path(name), "--model-config ", "--model", "--model-config PATH")
        raise QueryError(with_own_hint(error, OWN_MODEL_HINT.format(option)) + _every_hint(name, every)) from None
