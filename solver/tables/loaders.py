"""Loading the shipped data: the catalogue, cost weights, memory model and Trinity's field names, from the installed
tables."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path, PurePosixPath

from solver.tables.bounds import KNOWN_PATCH_RELEASES, MEMORY_MODEL_FILE
from solver.tables.catalog import Catalog
from solver.tables.inputs import MemoryModel, TrinityFields, Weights
from solver.tables.reading import (
    API_FILE_READERS,
    FileReaders,
    given_path,
    load_gpu_type,
    load_models,
    load_validated,
)
from solver.tables.schema import GpusFile, GpuType
from solver.tables.text import TableError, and_joined, check_types, first_repeated, it_or_them, normalise


def load_catalog(directory: Path | str | None = None) -> Catalog:
    """Load the models and every GPU type's tables from `directory` (default: the shipped tables)."""
    check_types(("directory", directory, Path | str | None))
    if directory is None:
        return _shipped_catalog()
    directory = given_path("directory", directory)
    models = load_models(directory / "models.yaml")
    gpus_file = load_validated(GpusFile, directory / "gpus.yaml")
    hardware = gpus_file.gpus
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
    _check_names_once(directory, hardware, gpu_types, gpus_file, read_from)
    return Catalog(models=models, gpu_types=gpu_types, without_bf16=gpus_file.without_bf16)


def _check_names_once(directory: Path, hardware: tuple[GpuType, ...], gpu_types: tuple[GpuType, ...],
                      gpus_file: GpusFile, read_from: dict[str, Path]) -> None:
    """`TableError` where a name (as `normalise` reads it) is given to two GPU types of the catalogue in `directory`
    (`gpu_types`: those of ``gpus.yaml``, `hardware`, each as its table file in `read_from` gives it, and those
    refused for want of bf16), naming both and the files that give it them (or the one given it twice)."""
    owners: list[tuple[str, str, str]] = []  # (name as normalised, GPU type, the file that gives it the name)
    for listed, gpu_type in zip(hardware, gpu_types, strict=True):
        for name in (gpu_type.name, *gpu_type.aliases):  # a table file's own aliases join those of gpus.yaml
            given_in = "gpus.yaml" if name in (listed.name, *listed.aliases) else \
                f"feasibility/{read_from[listed.name].name}"
            owners.append((normalise(name), gpu_type.name, given_in))
    owners += [(name, refused.name, "gpus.yaml's without_bf16") for refused in gpus_file.without_bf16
               for name in map(normalise, (refused.name, *refused.aliases))]
    duplicate = first_repeated([name for name, _, _ in owners])
    if duplicate is not None:
        (first, first_in), (second, second_in) = [(gpu, given_in) for name, gpu, given_in in owners
                                                  if name == duplicate][:2]
        if first == second:
            raise TableError(f"{directory}: the name {duplicate!r} is given twice to {first} (in {first_in} and "
                             f"{second_in}; names match in any case): give it once")
        raise TableError(f"{directory}: the name {duplicate!r} is given to two GPU types, {first} ({first_in}) and "
                         f"{second} ({second_in}): give it to one")


def load_memory_model(path: Path | str | None = None, *, file_readers: FileReaders = API_FILE_READERS) -> MemoryModel:
    """Load memory-model coefficients from `path` (default: the shipped ``memory-model.yaml``); a file of
    another kind given is told what reads it, in `file_readers`' words (the API's; the command passes its own:
    `load_validated`)."""
    check_types(("path", path, Path | str | None))
    if path is None:
        return _shipped_memory_model()
    return load_validated(MemoryModel, given_path("path", path), file_readers=file_readers)


def load_weights(path: Path | str | None = None, *, file_readers: FileReaders = API_FILE_READERS) -> Weights:
    """Load cost weights from `path` (default: the shipped ``costs.yaml``); `file_readers` as `load_memory_model`'s."""
    check_types(("path", path, Path | str | None))
    if path is None:
        return _shipped_weights()
    return load_validated(Weights, given_path("path", path),
                          gpu_type_named=lambda name: _shipped_catalog().gpu_type_named(name),
                          file_readers=file_readers)


TRINITY_FIELDS_FILE = "trinity-fields.yaml"
"""The shipped field names of Trinity-RFT's typed config, per release (`TrinityFields`)."""


@cache
def load_trinity_fields() -> TrinityFields:
    """The field names of Trinity-RFT's typed config, per release, from the shipped ``trinity-fields.yaml``: every
    release rft-solver knows (`KNOWN_PATCH_RELEASES`; `TableError` where one is missing, and, from `TrinityFields`,
    where another is given)."""
    path = shipped_tables_directory() / TRINITY_FIELDS_FILE
    fields = load_validated(TrinityFields, path)
    missing = [release for release in KNOWN_PATCH_RELEASES if release not in fields.releases]
    if missing:
        raise TableError(f"{path}: releases: {and_joined(missing)} missing, whose rules rft-solver knows: add "
                         f"{it_or_them(len(missing))} (benchmarks/trinity_fields.py reads a release's wheel)")
    return fields


def shipped_tables_directory() -> Path:
    """Where the installed package keeps its tables (``tables/`` in a source checkout)."""
    return _installed_folder("solver.data", "tables")


def shipped_examples() -> dict[PurePosixPath, str]:
    """The example files the docs' commands read, installed as ``solver.examples`` (``docs/examples/`` in a source
    checkout): each file's path within the folder (``my-model/config.json``) and its text."""
    folder = _installed_folder("solver.examples", "docs/examples")
    files = sorted(path for path in folder.rglob("*") if path.is_file() and "__pycache__" not in path.parts)
    if not files:
        raise TableError(f"{folder}: no shipped examples there; reinstall rft-solver")
    try:
        return {PurePosixPath(*path.relative_to(folder).parts): path.read_bytes().decode("utf-8") for path in files}
    except (OSError, UnicodeDecodeError) as error:
        raise TableError(f"{folder}: the shipped examples cannot be read: {error}") from None


def _installed_folder(package: str, checkout: str) -> Path:
    """Where the installed data `package` is (the folder `checkout`, relative to the repository, in a source checkout
    that is not installed, or installed before the package was added)."""
    spec = importlib.util.find_spec(package)  # a folder of the repository, installed as package data
    if spec is None or not spec.submodule_search_locations:
        return Path(__file__).resolve().parent.parent.parent / checkout
    return Path(next(iter(spec.submodule_search_locations)))


def shipped_table_files() -> tuple[Path, ...]:
    """The files of the shipped tables (its ``*.yaml`` and those in ``feasibility/``), which a command must not
    overwrite."""
    directory = shipped_tables_directory()
    return (*directory.glob("*.yaml"), *directory.glob("feasibility/*"))


@cache
def _shipped_catalog() -> Catalog:
    return load_catalog(shipped_tables_directory())


@cache
def _shipped_weights() -> Weights:
    return load_validated(Weights, shipped_tables_directory() / "costs.yaml")


@cache
def _shipped_memory_model() -> MemoryModel:
    return load_validated(MemoryModel, shipped_tables_directory() / MEMORY_MODEL_FILE)
