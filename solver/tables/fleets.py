"""Loading a fleet file (solve cluster): its pools' GPU types and its jobs' models; and reading the placement the
fleet runs now (`read_current`: an earlier ``solve cluster --json``)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple

from solver.tables.bounds import release_name
from solver.tables.catalog import POOL_TAKES_ONE, Catalog, CountedGpu, pools_gpu_types
from solver.tables.inputs import (
    CurrentFile,
    CurrentPlacement,
    Fleet,
    FleetFile,
    Job,
    JobEntry,
    Pool,
    RunningTraining,
)
from solver.tables.loaders import load_catalog
from solver.tables.model_config import config_keys_differing, load_model_config, model_config_file
from solver.tables.reading import (
    API_FILE_READERS,
    FileReaders,
    FleetLoader,
    check_built_again,
    given_path,
    load_validated,
    looks_like,
    read_user_file,
    validated_data,
    yaml_looks_like,
)
from solver.tables.schema import GPU_NAMED, HOST_RAM_WRITTEN, TYPED, GpuType, Model
from solver.tables.text import (
    QueryError,
    TableError,
    check_types,
    names_a_stream,
    normalise,
    with_own_hint,
    yaml_brief,
    yaml_flow_text,
)

OWN_GPU_HINT = "; or, for a GPU type of your own, give its memory: {}"
"""What an unknown GPU's message adds where a GPU type may be given by its memory (the option's name)."""
OWN_MODEL_HINT = "; or, for a model of your own, its Hugging Face config.json: {}"
"""What an unknown model's message adds where a model may be given by its config.json (the option's name)."""
OWN_GPU_IN_CODE = OWN_GPU_HINT.format(
    "solver.described_gpu_type(NAME, memory_gb=M), with catalog=solver.load_catalog().with_gpu_types([that])")
OWN_MODEL_IN_CODE = OWN_MODEL_HINT.format(
    "solver.load_model_config(PATH), with catalog=solver.load_catalog().with_model(that)")
"""What an unknown GPU type's or model's message adds in code: how to give one of one's own (as --gpu-memory and
--model-config do for the command)."""
OWN_POOL_GPU = OWN_GPU_HINT.format("gpu_memory_gb=M")
"""What an unknown GPU type's message adds for a `Pool` built in code: its memory, as a cluster file's pool gives it."""


def own_model_option(name: str, path: Path, option: str, named_by: str, default: str) -> str:
    """How an unknown model's message (`OWN_MODEL_HINT`) names the way to give a model of one's own: where `path`
    (`name` taken as a path) is a local folder holding a config.json, or a file, given to `named_by`, which reads no
    file (a checkpoint's folder given to ``--model``), `option` with `name` (``--model-config ckpt/step-100 (the
    folder holds one; --model reads no file)``); else `default` (``--model-config PATH``)."""
    try:
        folder = path.is_dir()
        held = model_config_file(path).is_file()
    except (TableError, OSError, ValueError):  # a name no path can have, or a folder on the way not searchable
        held = False
    if not held:
        return default
    return f"{option}{name} ({'the folder holds one; ' if folder else ''}{named_by} reads no file)"


class ReadFleet(NamedTuple):
    """A cluster file as read (`read_fleet`), its names not checked yet (`checked_fleet`): the file at `path`,
    its `entries`, the model of each job's ``model_config`` (`configured`, by the path the job gives), and each
    pool's ``host_ram_gb`` written as text that tells more than its GiB (`host_ram_written`, by the pool's name:
    `Fleet.host_ram_written`)."""

    path: Path
    entries: FleetFile
    configured: dict[str, Model]
    host_ram_written: dict[str, str]

    @property
    def models(self) -> tuple[Model, ...]:
        """The models the jobs describe by ``model_config``, each once."""
        return tuple({model.name: model for model in self.configured.values()}.values())


def load_fleet(path: Path | str, catalog: Catalog | None = None) -> Fleet:
    """Load and check a cluster file against `catalog` (default: the shipped one); GPU and model names come back
    canonical (``a100`` -> ``A100-80GB``).

    Raises `TableError`, one line naming the file, the pool or job, and the field.
    """
    file = given_path("path", path)
    check_types(("catalog", catalog, Catalog | None))
    catalog = catalog if catalog is not None else load_catalog()
    return checked_fleet(read_fleet(file, catalog), catalog)


def read_fleet(path: Path, catalog: Catalog, file_readers: FileReaders = API_FILE_READERS) -> ReadFleet:
    """A cluster file and its jobs' ``model_config`` files, each read once, their models named as `catalog` names
    them (`Catalog.with_model`); `TableError` for a bad file (a file of another kind told what reads it, `file_readers`:
    `load_validated`). Its pools and jobs' names are checked by `checked_fleet`, against a catalogue that may have
    gained GPU types since (cells files') and these models."""
    host_ram_written: dict[str, str] = {}
    entries = load_validated(FleetFile, path, context={TYPED: True, GPU_NAMED: catalog.gpu_type_named,
                                                       HOST_RAM_WRITTEN: host_ram_written},
                             loader=FleetLoader, gpu_type_named=catalog.gpu_type_named, file_readers=file_readers)
    return ReadFleet(path, entries, _configured_models(path, entries.jobs, catalog, file_readers), host_ram_written)


def relative_paths_folder(path: Path) -> Path:
    """Where the relative paths of the cluster file at `path` (its jobs' ``model_config``) start: its folder, or the
    working directory where it is standard input (``/dev/stdin``; a shell's ``<(cat fleet.yaml)``), in no folder of
    the user's (`names_a_stream`)."""
    return Path() if names_a_stream(path) else path.parent


def checked_fleet(read: ReadFleet, catalog: Catalog) -> Fleet:
    """The fleet of a cluster file read (`read_fleet`), its GPU and model names checked against `catalog` and
    made canonical; `TableError` naming the file, the pool or job, and the field."""
    path, entries, configured, host_ram_written = read
    try:
        described = pools_gpu_types(entries.pools, catalog)
    except QueryError as error:
        raise TableError(f"{path}: {error}") from None
    with_gpus = catalog.with_gpu_types(described)
    gpu_hint = OWN_GPU_HINT.format("gpu_memory_gb")
    pools = tuple(pool.model_copy(update={"gpu": _canonical_name(path, "pool", pool.name, "gpu", partial(
        with_gpus.gpu, with_count=partial(pool_gpu_with_count, pool.gpus_per_node), one_asked_for=POOL_TAKES_ONE),
        pool.gpu, lambda: gpu_hint)})
        for pool in entries.pools)

    def model_hint(model: str) -> str:
        """An unknown job model's hint: ``model_config``, with the path where `model` is a checkpoint's (relative to
        the file, as ``model_config`` reads it), written as YAML reads it back (`yaml_flow_text`: ``'#ckpt'``)."""
        return OWN_MODEL_HINT.format(own_model_option(yaml_flow_text(model), relative_paths_folder(path) / model,
                                                      "model_config: ", "model", "model_config"))

    jobs = tuple(Job(**job.model_dump(exclude={"model", "config_path"}, exclude_unset=True),  # rollout_gpus_given
                     model=configured[job.config_path].name if job.config_path is not None
                     else _canonical_name(path, "job", job.name, "model", catalog.model, job.model or "",
                                          partial(model_hint, job.model or "")))
                 for job in entries.jobs)
    _check_one_context_per_model(path, entries.jobs, jobs, configured, catalog)
    files = {name: model_config_file(relative_paths_folder(path) / name) for name in configured}
    # Each job's own file: two files may give one model (a copy; a catalogue model's shape), and its config is checked
    # with the file it named.
    job_files = tuple((job.name, files[entry.config_path]) for entry, job in zip(entries.jobs, jobs)
                      if entry.config_path is not None)
    return Fleet(pools=pools, jobs=jobs, models=read.models, gpu_types=described,
                 model_config_files=tuple(dict.fromkeys(files.values())), model_config_of=job_files,
                 host_ram_written=tuple(host_ram_written.items()))


def pool_gpu_with_count(gpus_per_node: int, found: CountedGpu) -> str:
    """Why a pool's ``gpu`` that gives a GPU type with a count (``a100x8``) beside its `gpus_per_node` is refused, and
    the fields that give them apart (``gpu: a100, gpus_per_node: 8``: `CountedGpu.refused_in_pool`)."""
    return found.refused_in_pool("", gpus_per_node, lambda count: f"gpu: {found.name}, gpus_per_node: {count}")


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


def _configured_models(path: Path, jobs: Iterable[JobEntry], catalog: Catalog,
                       file_readers: FileReaders) -> dict[str, Model]:
    """The model of each job's ``model_config`` (a path relative to the cluster file at `path`, as
    `relative_paths_folder` says), named as `Catalog.with_model` names it; `TableError` naming the job for a bad
    config (`load_model_config`'s, with `file_readers`), or for two configs that give one name to two models: of
    different shapes, or of one shape but otherwise different (a context, a RoPE scaling, a ``model_type``: the fleet
    knows a model by its name; the error names the config.json keys that differ). Two configs of one model are
    one."""
    models: dict[str, Model] = {}
    read: dict[str, tuple[str, Model]] = {}  # the name a config gives, normalised: the job and model read
    named: dict[str, tuple[str, Model, Path]] = {}  # the name the catalogue gives it: the job, model and file
    for job in jobs:
        if job.config_path is None or job.config_path in models:
            continue
        try:
            found = model_config_file(relative_paths_folder(path) / job.config_path)
            if found.exists() and not found.is_file():  # a FIFO would block: a file names files
                raise TableError(f"{found}: not a regular file")
            model = load_model_config(found, file_readers=file_readers)
        except TableError as error:
            raise TableError(f"{path}: job {job.name}, model_config: {error}") from None
        earlier = read.setdefault(normalise(model.name), (job.name, model))
        if earlier[1].shape != model.shape:
            raise _one_name_two_models(path, job, model.name, earlier[0], "shape")
        catalog = catalog.with_model(model)
        made = catalog.models[-1]
        first, before, first_file = named.setdefault(made.name, (job.name, made, found))
        if before != made:
            keys = config_keys_differing(first_file, found)
            raise _one_name_two_models(path, job, model.name, first, (
                f"their config.json's {', '.join(keys)}" if keys else "what rft-solver reads of their config.json"))
        models[job.config_path] = made
    return models


def _one_name_two_models(path: Path, job: JobEntry, name: str, first: str, differing: str) -> TableError:
    """The error of the cluster file at `path` where `job`'s ``model_config`` names its model `name`, as job `first`'s
    does, but the two models differ (in `differing`, words)."""
    config = yaml_flow_text(job.config_path or "")  # as the file gives it (the job gives one: it names `name`)
    return TableError(f"{path}: job {job.name}, model_config: {config} names its model {name!r}, as job {first}'s "
                      f"does, but the two differ in {differing}: give the folders or _name_or_path different names")


def _canonical_name(path: Path, kind: str, name: str, field: str, resolve: Any, value: str,
                    hint: Callable[[], str]) -> str:
    """The canonical name of `value` (a GPU type or model); `TableError` naming the item when unknown (with
    `hint`'s words, worked out then, after the accepted names)."""
    try:
        return str(resolve(value).name)
    except QueryError as error:
        raise TableError(f"{path}: {kind} {name}, {field}: {with_own_hint(error, hint())}") from None


class RunningJob(NamedTuple):
    """A job of the fleet as the placement it runs now places it (`read_current`): indexes of the job and its pool,
    its nodes and GPUs there, its trainer and rollout GPUs, its plan's length, SP degree and Offload, and its model
    (None where the placement names none)."""

    job: int
    pool: int
    nodes: tuple[int, ...]
    gpu_indexes: tuple[int, ...]
    trainer_gpus: int
    rollout_gpus: int
    max_model_len: int
    sp: int
    offload: bool
    model: str | None = None
    training: RunningTraining | None = None
    """Its LoRA rank (0: full fine-tuning), PPO critic (None: none), whether it trains DPO and its LoRA target_modules
    and exclude_modules regexes (None: all-linear, none), as its plan gives them; None where the placement gives no
    LoRA rank (not compared)."""
    trinity_version: str | None = None
    """The Trinity release it runs on, as its plan names it (`release_name`); None where the plan names none, or one
    rft-solver does not know (not compared: the job is judged under the fleet's release for it, `running_releases`)."""

    def gone_nodes(self, pool: Pool) -> tuple[int, ...]:
        """The nodes the job runs on that `pool` (its own) no longer has: its ``nodes`` lowered below them (to 0
        too)."""
        return tuple(node for node in self.nodes if node >= pool.nodes)

    def gone_gpus(self, pool: Pool) -> tuple[int, ...]:
        """The GPU indexes the job runs on that `pool`'s nodes (its own) no longer have: its ``gpus_per_node``
        lowered below them."""
        return tuple(gpu for gpu in self.gpu_indexes if gpu >= pool.gpus_per_node)

    def down_nodes(self, pool: Pool) -> tuple[int, ...]:
        """The nodes the job runs on that `pool` (its own) has ``down``."""
        return tuple(node for node in self.nodes if node in pool.down)

    def runs_where_gone(self, pool: Pool) -> bool:
        """Whether `pool` (its own) no longer has, or has down, a node or GPU the job runs on (`gone_nodes`,
        `down_nodes`, `gone_gpus`): the job cannot stay there: it moves, or stops."""
        return bool(self.gone_nodes(pool) or self.down_nodes(pool) or self.gone_gpus(pool))


def read_current(path: Path, fleet: Fleet, schema_version: int, flag: str = "",
                 file_readers: FileReaders = API_FILE_READERS) -> tuple[RunningJob, ...]:
    """The jobs of `fleet` that run now, as the placement at `path` (``solve cluster --json``'s output, of
    `schema_version`) places them, in its order; a job or pool the fleet no longer has is not running (its entry is
    skipped), but a job on nodes or GPUs its pool no longer has (``nodes`` lowered below them, to 0 too: out of
    service; ``gpus_per_node`` lowered below them) runs there until it stops (`RunningJob.runs_where_gone`).
    `TableError`, one line, for a file that cannot be read or is no such placement (a purchase, ``solve cluster --buy
    --json``'s, included: what to buy, not what runs), naming the file after `flag` (``--current ``), and what reads
    a file of another kind given, `file_readers` (`looks_like`)."""
    try:
        return current_jobs(_current_json(path, file_readers), str(path), fleet, schema_version)
    except TableError as error:
        raise TableError(f"{flag}{error}") from None


def current_jobs(raw: dict[str, Any], where: str, fleet: Fleet, schema_version: int) -> tuple[RunningJob, ...]:
    """The jobs of `fleet` that run now, as the placement `raw` places them (``solve cluster --json``'s JSON object, or
    a `ClusterResult`'s ``model_dump(mode="json")``, of `schema_version`), in its order, as `read_current` reads
    them; `TableError`, one line starting with `where` (the file), where it is no such placement."""
    given = raw.get("schema_version", CurrentFile.model_fields["schema_version"].default)  # JSON made before the key
    if isinstance(given, bool) or given != schema_version:  # true == 1 in Python
        raise TableError(f"{where}: schema_version is {yaml_brief(given)}: this release of rft-solver reads "
                         f"{schema_version} (place the fleet again with this release's solve cluster --json)")
    current = validated_data(CurrentFile, raw, where, yaml_read=False)  # JSON, not YAML: no YAML hints
    jobs = {job.name: index for index, job in enumerate(fleet.jobs)}
    pools = {pool.name: index for index, pool in enumerate(fleet.pools)}
    return tuple(_running(placed, jobs[placed.job], pools[placed.pool]) for placed in current.placements
                 if placed.job in jobs and placed.pool in pools)


def pools_gone(path: Path, fleet: Fleet) -> dict[str, tuple[str, ...]]:
    """The pools the placement at `path` (``--current``, which `read_current` has read) runs jobs of `fleet` in that
    `fleet` has none of (renamed or removed), each with those jobs, by name: `read_current` takes them as not running,
    though they run there until stopped."""
    by_pool: dict[str, list[str]] = {}
    for placed in _running_gone(_current_json(path), str(path), fleet, pool_gone=True):
        by_pool.setdefault(placed.pool, []).append(placed.job)
    return {pool: tuple(names) for pool, names in by_pool.items()}


def current_jobs_gone(current: Path | dict[str, Any], fleet: Fleet) -> tuple[CurrentPlacement, ...]:
    """The entries of the placement `current` (its path, as `read_current` takes it, or its JSON object, as
    `current_jobs` does, which has read it) whose job `fleet` has none of (renamed or removed) in a pool it has, in
    the placement's order: they are taken as not running, so their GPUs as free, though they run there until
    stopped."""
    if isinstance(current, Path):
        return _running_gone(_current_json(current), str(current), fleet, pool_gone=False)
    return _running_gone(current, "current", fleet, pool_gone=False)


def _running_gone(raw: dict[str, Any], where: str, fleet: Fleet, *, pool_gone: bool) -> tuple[CurrentPlacement, ...]:
    """The entries of the placement `raw` whose pool `fleet` lacks though it has the job (`pool_gone`), or whose job it
    lacks though it has the pool, in the placement's order."""
    pools = {pool.name for pool in fleet.pools}
    jobs = {job.name for job in fleet.jobs}
    return tuple(placed for placed in validated_data(CurrentFile, raw, where, yaml_read=False).placements
                 if ((placed.pool not in pools and placed.job in jobs) if pool_gone
                     else (placed.pool in pools and placed.job not in jobs)))


def releases_differing(path: Path, fleet: Fleet, release: str | None) -> dict[str | None, tuple[str, ...]]:
    """The jobs the placement at `path` (``--current``, which `read_current` has read) runs, and `fleet` takes as
    running, that are judged under this run's Trinity release `release` (as `solver.tables.release_name` names it;
    None: none named) though their plans were counted for another: those that name no release of their own in
    `fleet` and whose plan names none that rft-solver knows (none, or one made before it knew the patches), by the
    release it names (None: none), in the placement's order. A job whose plan names one it knows keeps that one
    (`running_releases`)."""
    pools = {pool.name for pool in fleet.pools}
    own = {job.name: job.trinity_version for job in fleet.jobs}
    differing: dict[str | None, list[str]] = {}
    for placed in validated_data(CurrentFile, _current_json(path), str(path), yaml_read=False).placements:
        counted_for = placed.plan.trinity_version
        if (placed.pool in pools and placed.job in own and own[placed.job] is None
                and release_name(counted_for) is None and counted_for != release):
            differing.setdefault(counted_for, []).append(placed.job)
    return {counted_for: tuple(names) for counted_for, names in differing.items()}


PURCHASE_KEY = "fits_nowhere"
"""A key that ``solve cluster --buy --json`` writes and ``solve cluster --json`` does not (`PurchaseResult`'s, not
`ClusterResult`'s): `read_current` refuses a file with it."""


STDERR_LINE = re.compile(r"^solve(?: [a-z]+)?: (?:note|warning): ", re.MULTILINE)
"""A line that ``solve`` writes to standard error (``solve cluster: note: ...``, ``solve cluster: warning: ...``),
which a placement saved with ``2>&1`` holds beside the JSON."""


def _current_json(path: Path, file_readers: FileReaders = API_FILE_READERS) -> dict[str, Any]:
    """The JSON object at `path`, with the ``placements`` every ``solve cluster --json`` has (its ``schema_version``
    too, since JSON had one); `TableError` otherwise (for a file that holds standard error's notes too, saying to save
    standard output alone; for a file of another kind, a Trinity config or a fleet file, naming it in
    `file_readers`' words: `looks_like`)."""
    text = read_user_file(path)  # its own one-line error where the file cannot be read
    try:
        raw = json.loads(text)
    except ValueError as error:
        mixed = ("; solve's notes on standard error are in it too: a placement is what solve cluster --json printed on "
                 "standard output alone (> FILE, not 2>&1)" if STDERR_LINE.search(text) else
                 ": a placement is what solve cluster --json printed")
        kind = yaml_looks_like(text, CurrentFile, file_readers)
        raise TableError(f"{path}: not JSON ({' '.join(str(error).split())}){kind}{mixed}") from None
    except RecursionError:  # arrays in arrays thousands deep: json's own limit is Python's stack
        raise TableError(f"{path}: nested too deeply: a placement is what solve cluster --json printed") from None
    if not isinstance(raw, dict) or "placements" not in raw:
        kind = looks_like(raw, CurrentFile, file_readers) if isinstance(raw, dict) else ""
        raise TableError(f"{path}: not solve cluster --json's output (a JSON object with placements){kind}: a "
                         "placement is what solve cluster --json printed")
    if PURCHASE_KEY in raw:  # its placement is on nodes to buy: what the fleet would run, not what it runs
        raise TableError(f"{path}: solve cluster --buy --json's output, what to buy, not what the fleet runs now: a "
                         "placement is what solve cluster --json printed")
    return raw


def _running(placed: CurrentPlacement, job: int, pool: int) -> RunningJob:
    """`placed` as job `job` of the fleet, in its pool `pool` (indexes), its GPU indexes in ascending order, as a
    placement lists them (a file may list them in any: the same GPUs); its nodes in their own (its trainer's first)."""
    plan = placed.plan
    return RunningJob(job=job, pool=pool, nodes=placed.nodes, gpu_indexes=tuple(sorted(placed.gpu_indexes)),
                      trainer_gpus=placed.trainer_gpus, rollout_gpus=placed.rollout_gpus,
                      max_model_len=plan.max_model_len, sp=plan.sp, offload=plan.offload, model=placed.model,
                      training=None if plan.lora_rank is None else (
                          plan.lora_rank, plan.critic, plan.dpo, plan.lora_target_modules, plan.lora_exclude_modules),
                      trinity_version=release_name(plan.trinity_version))


def running_releases(fleet: Fleet, running: Iterable[RunningJob]) -> Fleet:
    """`fleet` with each job that runs now on a Trinity release its plan names (`RunningJob.trinity_version`) given
    that one where it names none of its own (its ``trinity_version``), or one of which that is a patch (``0.5``
    running ``0.5.1``: the release it runs on, whose transformers the counts follow): a running job keeps the release
    it runs on, and its ways are counted for it; the others as they are (their own release, else the run's)."""
    kept = {job.job: job.trinity_version for job in running if job.trinity_version is not None}
    return fleet.model_copy(update={"jobs": tuple(
        job.model_copy(update={"trinity_version": kept[index]})
        if index in kept and (job.trinity_version is None or kept[index].startswith(f"{job.trinity_version}."))
        else job for index, job in enumerate(fleet.jobs))})


def given_fleet(fleet: Fleet | Path | str, catalog: Catalog) -> Fleet:
    """A fleet as the API's functions take it: a `Fleet` built or changed in code, checked again and named as
    `catalog` names (`_named_as_the_catalogue`'s `QueryError`), or the path of a cluster file, loaded with `catalog`
    (`load_fleet`'s `TableError`)."""
    return (_named_as_the_catalogue(fleet, catalog) if isinstance(fleet, Fleet)
            else load_fleet(given_path("fleet", fleet), catalog))


def _named_as_the_catalogue(fleet: Fleet, catalog: Catalog) -> Fleet:
    """A `Fleet` built in code with its pools' GPU types and its jobs' models as the catalogue names them (``a100``
    -> ``A100-80GB``), as `load_fleet` gives a cluster file's; `QueryError` for a name the catalogue lacks, or a fleet
    that breaks its own checks (changed by `model_copy`, which checks nothing: `check_built_again`)."""
    check_built_again(fleet, "fleet")
    known = catalog.for_fleet(fleet)
    return fleet.model_copy(update={
        "pools": tuple(pool.model_copy(update={"gpu": _fleet_name(
            f"pool {pool.name}",
            partial(known.gpu, pool.gpu, partial(_built_pool_gpu_with_count, pool), POOL_TAKES_ONE),
            OWN_POOL_GPU)}) for pool in fleet.pools),
        "jobs": tuple(job.model_copy(update={"model": _fleet_name(
            f"job {job.name}", partial(known.model, job.model), OWN_MODEL_IN_CODE)}) for job in fleet.jobs)})


def _fleet_name(where: str, find: Callable[[], GpuType | Model], hint: str) -> str:
    """The catalogue's name of a `Fleet`'s pool's GPU type or job's model (`find`); `QueryError` naming the pool or
    job (`where`) where the catalogue lacks it, with `hint`, how to give one of one's own, as a cluster file's names
    its pool or job and the way out."""
    try:
        return find().name
    except QueryError as error:
        raise QueryError(f"{where}: {with_own_hint(error, hint)}") from None


def _built_pool_gpu_with_count(pool: Pool, found: CountedGpu) -> str:
    """Why a `Pool` built in code whose ``gpu`` gives a GPU type with a count (``a100x8``) is refused, and the
    keywords that give them apart (``gpu='a100', gpus_per_node=8``: `CountedGpu.refused_in_pool`)."""
    return found.refused_in_pool("gpu=", pool.gpus_per_node,
                                 lambda count: f"gpu={found.name!r}, gpus_per_node={count}")
