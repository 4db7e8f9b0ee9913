"""Loading a fleet file (solve cluster): its pools' GPU types and its jobs' models."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from solver.tables.catalog import Catalog, pools_gpu_types
from solver.tables.inputs import Fleet, FleetFile, Job, JobEntry
from solver.tables.loaders import load_catalog
from solver.tables.model_config import load_model_config, model_config_file
from solver.tables.reading import load_validated
from solver.tables.schema import Model
from solver.tables.text import QueryError, TableError, check_types, normalise

OWN_GPU_HINT = "; or, for a GPU type of your own, give its memory: {}"
"""What an unknown GPU's message adds where a GPU type may be given by its memory (the option's name)."""


def load_fleet(path: Path | str, catalog: Catalog | None = None) -> Fleet:
    """Load and check a cluster file against `catalog` (default: the shipped one); GPU and model names come back
    canonical (``a100`` -> ``A100-80GB``).

    Raises `TableError`, one line naming the file, the pool or job, and the field.
    """
    check_types(("path", path, Path | str), ("catalog", catalog, Catalog | None))
    catalog = catalog if catalog is not None else load_catalog()
    path = Path(path)
    fleet = load_validated(FleetFile, path)
    try:
        described = pools_gpu_types(fleet.pools, catalog)
    except QueryError as error:
        raise TableError(f"{path}: {error}") from None
    with_gpus = catalog.with_gpu_types(described)
    hint = OWN_GPU_HINT.format("gpu_memory_gb")
    pools = tuple(pool.model_copy(update={"gpu": _canonical_name(path, "pool", pool.name, "gpu", with_gpus.gpu,
                                                                 pool.gpu, hint)})
                  for pool in fleet.pools)
    configured = _configured_models(path, fleet.jobs, catalog)
    jobs = tuple(Job(**job.model_dump(exclude={"model", "config_path"}),
                     model=configured[job.config_path].name if job.config_path is not None
                     else _canonical_name(path, "job", job.name, "model", catalog.model, job.model or ""))
                 for job in fleet.jobs)
    _check_one_context_per_model(path, fleet.jobs, jobs, configured, catalog)
    return Fleet(pools=pools, jobs=jobs, models=tuple({model.name: model for model in configured.values()}.values()),
                 gpu_types=described,
                 model_config_files=tuple(dict.fromkeys(model_config_file(path.parent / name) for name in configured)))


def _check_one_context_per_model(path: Path, entries: Iterable[JobEntry], jobs: Iterable[Job],
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
    configured = _configured_models(path, load_validated(FleetFile, path).jobs, catalog)
    return tuple({model.name: model for model in configured.values()}.values())


def _configured_models(path: Path, jobs: Iterable[JobEntry], catalog: Catalog) -> dict[str, Model]:
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
        earlier = read.setdefault(normalise(model.name), (job.name, model))
        if earlier[1].shape != model.shape:
            raise TableError(f"{path}: job {job.name}: model_config: {job.config_path} names its model "
                             f"{model.name!r}, as job {earlier[0]}'s does, but the two differ in shape: give the "
                             "folders or _name_or_path different names")
        catalog = catalog.with_model(model)
        models[job.config_path] = catalog.models[-1]
    return models


def _canonical_name(path: Path, kind: str, name: str, field: str, resolve: Any, value: str, hint: str = "") -> str:
    """The canonical name of `value` (a GPU type or model); `TableError` naming the item when unknown (with
    `hint` after the accepted names)."""
    try:
        return str(resolve(value).name)
    except QueryError as error:
        raise TableError(f"{path}: {kind} {name}: {field}: {error}{hint}") from None
