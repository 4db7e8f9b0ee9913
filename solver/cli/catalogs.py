"""The catalogue a ``solve`` command plans with: the shipped one, with --model-config, --cells and --gpu-memory."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from solver.tables import (
    OWN_GPU_HINT,
    OWN_MODEL_HINT,
    Catalog,
    GpuType,
    Model,
    QueryError,
    check_once,
    cut,
    described_gpu_type,
    load_catalog,
    read_cells_files,
    with_own_hint,
)


class CommandCatalog(NamedTuple):
    """The catalogue a command plans with (`catalog_with`), the name of the model it added ("" without one), and
    each --cells file with the GPU type it gave, as read (once: a pipe reads once)."""

    catalog: Catalog
    added: str
    cells: tuple[tuple[Path, GpuType], ...]


def catalog_with(model: Model | None, gpu: str | None = None,
                 memory: tuple[int | None, int | None] | None = None,
                 cells: Sequence[Path] = (), start: Catalog | None = None,
                 keep_contradictions: bool = False, join: bool = True) -> CommandCatalog:
    """The shipped catalogue (or `start`), with `model` added (--model-config's), the tables of the --cells
    files (which may name it; with `keep_contradictions`, even where they contradict themselves or the tables, to
    list them; without `join`, their GPU types alone, as `solve calibrate` reads them: `read_cells_files`),
    and the GPU type that --gpu NAME --gpu-memory M describes; and that model's name as the catalogue gives it
    ("" without one); and the GPU type each --cells file gave (`CommandCatalog`)."""
    catalog, added = start or load_catalog(), ""
    if model is not None:
        catalog = catalog.with_model(model)
        added = catalog.models[-1].name  # with_model adds it last, renamed if it only borrows a name
    check_once("--cells", cells)
    catalog, loaded = read_cells_files(catalog, cells, join=join, keep_contradictions=keep_contradictions,
                                       flag="--cells ")
    if memory is None and gpu is not None:
        try:
            catalog.gpu(gpu)
        except QueryError as error:
            raise QueryError(with_own_hint(error, OWN_GPU_HINT.format('--gpu-memory M'))) from None
    if memory is not None:
        if gpu is None:
            raise QueryError("--gpu-memory gives the memory of the GPU type --gpu NAME names: give --gpu too")
        try:
            known = catalog.gpu(gpu)
        except QueryError:
            catalog = catalog.with_gpu_types([described_gpu_type(gpu, *memory, source="--gpu-memory")])
        else:
            raise QueryError(f"--gpu {cut(gpu)} names {known.name} ({known.memory_gib:.1f} GiB), a GPU type "
                             "whose memory is known: drop --gpu-memory, or give your GPU type a name of its own")
    return CommandCatalog(catalog, added, loaded)


def check_model_flags(args: argparse.Namespace, ways: str, given: bool = False) -> None:
    """One way to name the model: --model or --model-config (or, with `given`, another the caller has)."""
    if args.model is not None and args.model_config is not None:
        raise QueryError("--model and --model-config both name the model: give one")
    if args.model is None and args.model_config is None and not given:
        raise QueryError(f"which model? give {ways}")


def catalogue_model(catalog: Catalog, name: str) -> Model:
    """The model `name` names in `catalog`; `QueryError` for an unknown name, which also says how to give a model
    the catalogue lacks (--model-config)."""
    try:
        return catalog.model(name)
    except QueryError as error:
        raise QueryError(with_own_hint(error, OWN_MODEL_HINT.format('--model-config PATH'))) from None
