"""Calibrate the memory model's coefficients on documented cells with a linear program (OR-Tools GLOP).

Evidence, from each cell of a table in the tables' format: the cell's setting fits at its length
(positive), and every setting the source would have tried before it did not (negative; at a ``-`` cell,
none of them did). For each observation the model's margin, ``sum(coefficient * term) - usable * memory``,
is linear in the coefficients: a positive observation wants it at most ``-gap``, a negative one at least
``+gap``. A positive one without Offload wants the optimizer step's margin (`solver.memory.optimizer_step_gib`
against `STEP_USABLE` of the memory, linear in the overhead) at most ``-gap`` too, as ``Breakdown.fits`` requires.
The program minimises the violations (a wrongly predicted fit, which would let a plan run out of memory, weighs ten
times a wrongly predicted failure) plus a small pull of every multiplier towards its first-principles value of 1,
and of ``usable_env`` down towards ``usable`` (a fit that the evidence leaves free there gives Env no memory it has
not shown, on the safe side).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from solver.memory import (
    PER_TOKEN_TERMS,
    PRIOR,
    STEP_USABLE,
    TERMS,
    breakdown,
    features,
    optimizer_step_states_gib,
    token_features,
    token_floor_gib,
)
from solver.results import Calibration, UnphysicalCode
from solver.rules import failed_settings, token_budget
from solver.tables import (
    DEFAULT_MARGIN,
    CalibrationRange,
    Catalog,
    Coefficients,
    FitSummary,
    GpuType,
    MemoryModel,
    Model,
    QueryError,
    Setting,
    cell_text,
    contradictions_refused,
    counted,
    load_memory_model,
    path_text,
)

GAP = 0.005
"""The margin, as a fraction of GPU memory, that separates fitting from not fitting in the fit."""
FLOOR_TOKENS = 65536
"""Tokens per GPU at which the fit is held to the physical floor (`solver.memory.token_floor_gib`): any number
would do, since the floor and the terms it bounds are in proportion to the tokens; this one keeps them near 1 GiB."""
FLOOR_TOLERANCE = 1e-5
"""How far above the physical floor per token (a fraction of it) the fitted terms may lie for `at_token_floor` to
take the floor as binding: the coefficients are written to 6 decimals."""
UNSAFE_WEIGHT = 10.0
"""How much more a wrongly predicted fit costs in the fit than a wrongly predicted failure."""
PULL = 0.05
"""Weight of each multiplier's distance from 1 (first principles), per unit."""
CALIBRATION_TIME_LIMIT_MS = 60_000
"""The linear program's time limit (GLOP solves the shipped tables' 2134 observations in well under a second)."""
BOUNDS = {
    "states": (0.5, 4.0), "gathered": (0.0, 20.0), "checkpoints": (0.1, 40.0), "logits": (0.1, 40.0), "recompute": (0.1, 80.0),
    "sp_buffers": (0.0, 80.0), "fragmentation": (0.0, 10.0), "overhead": (0.0, 30.0),
}
"""Physically plausible ranges of the multipliers (``overhead`` is in GiB)."""
FAR_FACTOR = 3.0
"""How many times beyond both the shipped fit's value and first principles' a fitted multiplier lies for ``solve
calibrate`` to caution that few cells decide it (`far_from_shipped`): fits on a documented GPU type's tables alone
stay within it of one or the other (the A100's and H20's ``sp_buffers`` near 1, a seventh of the shipped 6.46)."""


@dataclass(frozen=True)
class PhysicalRange:
    """The values a fitted multiplier can take by the memory model's derivation (docs/memory.md), ``None`` for no
    limit that way, and what they stand for in words (after the range: ``1 to 1.25: ...``)."""

    low: float | None
    high: float | None
    derivation: str

    def words(self) -> str:
        """The range and what it stands for: ``1 to 1.25: 16 to 20 bytes ...``, ``at least 0.4: ...``."""
        bounds = (f"{self.low:g} to {self.high:g}" if self.low is not None and self.high is not None
                  else f"at least {self.low:g}" if self.low is not None else f"at most {self.high:g}")
        return f"{bounds}: {self.derivation}"


PHYSICAL = {
    "states": PhysicalRange(1.0, 1.25, (
        "16 to 20 bytes per parameter, from mixed-precision Adam's fp32 master weights and two moments with bf16 "
        "weights and gradients (ZeRO's count) to fp32 gradients and bf16 copies of both besides")),
    "gathered": PhysicalRange(0.4, None, (
        "4 of its 10 bytes per layer parameter, the bf16 weights and gradients of the layer that FSDP computes")),
    "sp_buffers": PhysicalRange(1.0, None, (
        "one bf16 hidden state per token, the layer's activations that Ulysses' all-to-all receives")),
    "fragmentation": PhysicalRange(None, 1.0, (
        "4 bytes per logit, two bf16 copies of the logits (verl's are bf16), as the term counts them: the holes they "
        "leave are no larger than that")),
}
"""The physical range of each multiplier that the derivation bounds, which `unphysical` holds a fit to. The others
have none of their own: checkpoints, logits and recompute are held together to the physical floor per token in the
fit itself (alone, each may read below 1: the shipped checkpoints do), overhead is an estimate (1 GiB), not derived,
the usable fraction without Env is fixed, and with Env it lies between that and all of the memory by the fit's own
constraints (`at_bounds` names it at 1)."""


@dataclass(frozen=True)
class Observation:
    """One measured setting: did `setting` train `model` on `gpus` GPUs of `memory_gib` at `max_model_len`?"""

    gpu: str
    model: Model
    memory_gib: float
    gpus: int
    setting: Setting
    max_model_len: int
    fits: bool


def observations(
    catalog: Catalog, keep: Callable[[str, int, str], bool] | None = None,
    gpu_types: Iterable[GpuType] | None = None,
) -> list[Observation]:
    """Positive and negative evidence from every cell of `gpu_types`' tables (default: the documented
    ones), among those `keep(gpu, gpus, model)` accepts."""
    found = []
    for gpu in (catalog.documented_gpu_types if gpu_types is None else gpu_types):
        for table in gpu.tables:
            for name in table.models:
                if keep is not None and not keep(gpu.name, table.gpus, name):
                    continue
                model = catalog.model(name)
                for row in table.rows:
                    cell = row.setting(name)
                    evidence = [(setting, False) for setting in failed_settings(model, table.gpus, cell)]
                    if cell is not None:
                        evidence.append((cell, True))
                    found += [Observation(gpu.name, model, gpu.memory_gib, table.gpus, setting, row.max_model_len, fits)
                              for setting, fits in evidence]
    return found


def optimistic(evidence: Iterable[Observation], coefficients: Coefficients, margin: float
               ) -> list[tuple[Observation, float, float]]:
    """The observations of a setting that ran out of memory where the memory model (`coefficients`, with `margin`)
    predicts it fits, each with the predicted peak and the usable memory (GiB), the largest shortfall first:
    where estimates near those cells may be optimistic too."""
    found = []
    for seen in evidence:
        if not seen.fits:
            predicted = breakdown(seen.model, seen.memory_gib, seen.gpus, seen.setting, seen.max_model_len,
                                  coefficients, margin)
            if predicted.fits:
                found.append((seen, predicted.total_gib, predicted.usable_gib))
    return sorted(found, key=lambda item: item[1] - item[2])


def contradictions(mine: Iterable[GpuType], documented: Iterable[GpuType]) -> list[str]:
    """Cells of `mine` that the `documented` tables give another setting (same GPU type, trainer GPU
    count, model and length), each as ``GPU, N GPUs, MODEL at L: yours 'A', the table's 'B'``."""
    known = {(gpu.name, table.gpus, name, row.max_model_len): row.setting(name)
             for gpu in documented for table in gpu.tables for row in table.rows for name in table.models}
    found = []
    for gpu in mine:
        for table in gpu.tables:
            for row in table.rows:
                for name in table.models:
                    key = (gpu.name, table.gpus, name, row.max_model_len)
                    if key in known and known[key] != row.setting(name):
                        found.append(f"{gpu.name}, {counted(table.gpus, 'GPU')}, {name} at {row.max_model_len}: yours "
                                     f"{cell_text(row.setting(name))!r}, the table's {cell_text(known[key])!r}")
    return found


def refuse_own_contradictions(catalog: Catalog, cells: Sequence[tuple[Path, GpuType]], flag: str = "") -> None:
    """`TableError` naming the first of the `cells` files (each file's path and GPU type, read by
    `read_cells_files` without `join` into `catalog`: names, memory and each GPU count's one table checked across the
    files) whose cells contradict themselves or an earlier file's, as planning with them refuses them (a typo there
    would fit a model that plans runs out of memory): the `Catalog.contradictions` each file adds to those before it.
    The message names the file after `flag` (``--cells ``), and ``solve tables --check`` where it can list them (the
    files give no table for a GPU type and count that `catalog` has)."""
    tabled = {(gpu_type.name, table.gpus) for gpu_type in catalog.gpu_types for table in gpu_type.tables}
    listed = all((measured.name, table.gpus) not in tabled for _, measured in cells for table in measured.tables)
    merged = Catalog(models=catalog.models, gpu_types=())
    for path, measured in cells:
        merged, before = merged.with_tables(measured), merged
        found = before.new_contradictions(merged, measured.name)
        if found:
            raise contradictions_refused(f"{flag}{path}", found, listed=listed)


def _cells_source(paths: Sequence[Path], *, with_tables: bool) -> str:
    """What a memory model fitted on the cells files at `paths` (with the documented tables too where
    `with_tables`) says it was calibrated on, in its ``source``."""
    source = ", ".join(path_text(path.name) for path in paths) or "the documented tables"
    return source + (" and the documented tables" if with_tables else "")


def calibration(catalog: Catalog, cells: Sequence[tuple[Path, GpuType]], *, with_tables: bool,
                flag: str = "") -> Calibration:
    """Fit the memory model on the catalogue's documented tables, or on the `cells` files you measured, loaded
    already (each file's path and GPU type: a file read once), with the documented tables too where `with_tables`;
    the model's ``source`` names the files. `TableError` for cells that contradict themselves or one another
    (`refuse_own_contradictions`, naming the file after `flag`); `QueryError` where there are no cells, or none that
    trained."""
    refuse_own_contradictions(catalog, cells, flag)
    measured = [gpu_type for _, gpu_type in cells]
    source = _cells_source([path for path, _ in cells], with_tables=with_tables)
    evidence = observations(catalog, gpu_types=measured or None)
    yours = list(evidence) if measured else []  # the cells whose misses are named, not the documented tables'
    clashes = contradictions(measured, catalog.documented_gpu_types)  # planning with the cells refuses these
    for gpu_type in measured:  # and across GPU counts: those the documented tables lack, beside theirs
        clashes += catalog.new_contradictions(catalog.with_new_tables(gpu_type), gpu_type.name)
    if measured and with_tables:
        evidence += observations(catalog)
    if not evidence:
        raise QueryError("no cells to calibrate on")
    coefficients, fit = calibrate(evidence)
    outside, shipped = unphysical(coefficients), load_memory_model()
    if not fit.positives:  # only cells of yours can be all '-': the documented tables beside them are not
        files = ", ".join(str(path) for path, _ in cells)
        raise QueryError(f"{flag}{files}: no cell names a setting that trained (all are '-'): nothing shows how much "
                         "memory a run may take; add cells that trained")
    return Calibration(
        memory_model=MemoryModel(source=f"calibrated on {source}", coefficients=coefficients, margin=DEFAULT_MARGIN,
                                 fit=fit),
        table_contradictions=tuple(clashes),
        at_bounds=tuple(at_bounds(coefficients)), first_principles=tuple(at_first_principles(coefficients)),
        mispredicted=tuple(mispredicted(yours, coefficients)),
        your_cells=len({(o.gpu, o.gpus, o.model.name, o.max_model_len) for o in yours}),
        unphysical=tuple(words for _, words in outside), unphysical_codes=tuple(code for code, _ in outside),
        far_from_shipped=tuple(_far_move(*far) for far in far_from_shipped(coefficients, shipped.coefficients)),
        at_token_floor=tuple(at_token_floor(coefficients, {observation.model for observation in evidence})),
        from_shipped=tuple(from_shipped(coefficients, shipped.coefficients)),
    )


def calibrate(evidence: Iterable[Observation]) -> tuple[Coefficients, FitSummary]:
    """Fit the coefficients to the evidence (see the module's docstring); deterministic."""
    from ortools.linear_solver import pywraplp  # here: a plan that only checks a fit (`implausible`) needs no solver
    evidence = list(evidence)
    solver = pywraplp.Solver.CreateSolver("GLOP")
    multiplier = {term: solver.NumVar(*BOUNDS[term], term) for term in TERMS}
    usable = solver.NumVar(PRIOR.usable, PRIOR.usable, "usable")  # fixed: it sets the scale of the rest
    usable_env = solver.NumVar(PRIOR.usable, 1.0, "usable_env")
    solver.Add(usable_env >= usable)
    objective = solver.Objective()
    for term, variable in multiplier.items():
        distance = solver.NumVar(0, solver.infinity(), f"distance_{term}")
        solver.Add(distance >= variable - 1)
        solver.Add(distance >= 1 - variable)
        objective.SetCoefficient(distance, PULL)
    objective.SetCoefficient(usable_env, PULL)  # down towards `usable`: its lower bound
    # The rows are set coefficient by coefficient, each the row `a <= b` of OR-Tools' natural API makes, bound for bound
    # (its expressions took 0.3 s of CPU for the shipped tables' 2134 observations, this 0.18 s).
    infinity = solver.infinity()

    def row(lower: float, upper: float, coefficients: Iterable[tuple[Any, float]]) -> None:
        constraint = solver.Constraint(lower, upper)
        for variable, coefficient in coefficients:
            constraint.SetCoefficient(variable, coefficient)

    # The physical floor holds where it is fitted (models in name order: the program is the same whatever the hashes).
    for model in sorted({observation.model for observation in evidence}, key=lambda shape: shape.name):
        tokens = token_features(model, 1, Setting(env=True, offload=False, sp=1), FLOOR_TOKENS)
        row(token_floor_gib(model, FLOOR_TOKENS), infinity,
            ((multiplier[term], tokens[term]) for term in PER_TOKEN_TERMS))
    for index, observation in enumerate(evidence):
        raw = features(observation.model, observation.gpus, observation.setting, observation.max_model_len)
        memory = float(observation.memory_gib)
        margin = [(multiplier[term], raw[term]) for term in TERMS]
        margin.append((usable_env if observation.setting.env else usable, -memory))
        violation = solver.NumVar(0, infinity, f"violation_{index}")
        if observation.fits:
            row(-infinity, -GAP * memory, [*margin, (violation, -1.0)])
            if not observation.setting.offload:  # the optimizer step must fit too, as `Breakdown.fits` requires
                step_states = optimizer_step_states_gib(observation.model, observation.gpus)
                row(-infinity, -GAP * memory - (step_states - STEP_USABLE * memory),
                    [(multiplier["overhead"], 1.0), (violation, -1.0)])
            objective.SetCoefficient(violation, 1.0 / memory)
        else:
            row(GAP * memory, infinity, [*margin, (violation, 1.0)])
            objective.SetCoefficient(violation, UNSAFE_WEIGHT / memory)
    objective.SetMinimization()
    solver.SetTimeLimit(CALIBRATION_TIME_LIMIT_MS)
    status = solver.Solve()
    if status != pywraplp.Solver.OPTIMAL:
        raise QueryError(f"the calibration program found no optimal fit for {counted(len(evidence), 'observation')} "
                         f"within {CALIBRATION_TIME_LIMIT_MS // 1000} s (GLOP status {status}); the cells are too many to "
                         "fit in time: give fewer")
    coefficients = Coefficients(
        **{term: round(variable.solution_value(), 6) for term, variable in multiplier.items()},
        usable=round(usable.solution_value(), 6), usable_env=round(usable_env.solution_value(), 6),
    )
    return coefficients, fit_summary(evidence, coefficients)


def mispredicted(evidence: Iterable[Observation], coefficients: Coefficients) -> list[str]:
    """The cells (GPU type, GPU count, model, length) of which `coefficients` predict an observation the other way
    (without a margin, as `fit_summary` counts them), in words: the cell as written, and its first such observation with
    the predicted peak against the usable memory (before any safety margin), and the optimizer step's against its
    share where the peak fits but the step does not."""
    cells: dict[tuple[str, int, str, int], list[Observation]] = {}
    for o in evidence:
        cells.setdefault((o.gpu, o.gpus, o.model.name, o.max_model_len), []).append(o)
    found = []
    for (gpu, gpus, model, length), observed in cells.items():
        for o in observed:
            result = breakdown(o.model, o.memory_gib, o.gpus, o.setting, o.max_model_len, coefficients)
            if result.fits != o.fits:
                cell = next((trained.setting.label for trained in observed if trained.fits), "-")
                said = "trained" if o.fits else "ran out of memory"
                step_decides = result.total_gib <= result.usable_gib and not result.step_fits
                step = (f", and its optimizer step {result.step_gib:.1f} GiB of the {result.step_usable_gib:.1f} it "
                        "may take" if step_decides else "")
                found.append(f"{model} on {gpus} x {gpu} at {length}, cell {cell!r}: {o.setting.label} {said} there, "
                             f"predicted {result.total_gib:.1f} GiB of {result.usable_gib:.1f} usable{step}")
                break
    return found


def at_bounds(coefficients: Coefficients) -> list[str]:
    """The fitted values at an edge of their plausible range (`BOUNDS`; a lower edge of 0 is plausible, no
    such term, and so is not listed), and ``usable_env`` when all of the memory is usable, to within the fit's
    `GAP` (an observation can hold it a hair below 1, where it is at the edge all the same)."""
    edges = [f"{term} {coefficients.multiplier(term):g}" for term in TERMS if at_edge(coefficients, term)]
    if coefficients.usable_env >= 1.0 - GAP:
        edges.append(f"usable_env {coefficients.usable_env:g}")
    return edges


def at_edge(coefficients: Coefficients, term: str, *, dropped: bool = False) -> bool:
    """Whether the multiplier `term` ended at an edge of its plausible range (`BOUNDS`); a lower edge of 0 (the term
    dropped) only with `dropped`: the warnings take 0 as plausible (no such term: `at_bounds` names none, and
    `far_from_shipped` says the term dropped), where ``solve calibrate``'s line on what the fit moved counts it at
    its edge, not among those moved."""
    low, high = BOUNDS[term]
    return coefficients.multiplier(term) in (high, low if low or dropped else None)


def far_from_shipped(coefficients: Coefficients, shipped: Coefficients) -> list[tuple[str, float, float]]:
    """The fitted multipliers that lie more than `FAR_FACTOR` times beyond both the `shipped` fit's value and first
    principles' (`PRIOR`'s 1), above the larger or below the smaller, which no warning names already (neither at an
    edge, `at_bounds`, nor outside its physical range, `unphysical`): each term, its value and the shipped one, in
    the order of `TERMS`. The fit is left as it is: these are what a few cells alone may decide."""
    warned = {term for term, _, _ in _outside_physical(coefficients)}
    found = []
    for term in TERMS:
        value, anchors = coefficients.multiplier(term), (shipped.multiplier(term), PRIOR.multiplier(term))
        if term not in warned and not at_edge(coefficients, term) and (
                value > FAR_FACTOR * max(anchors) or value * FAR_FACTOR < min(anchors)):
            found.append((term, value, shipped.multiplier(term)))
    return found


def _far_move(term: str, value: float, shipped: float) -> str:
    """A multiplier's fitted `value` against the `shipped` fit's, and by how much it moved, in words: ``logits 14.8,
    7.6 times the shipped fit's 1.95``, ``fragmentation 0, down from the shipped fit's 0.343 (the term dropped)``."""
    if value > shipped:
        return f"{term} {value:.3g}, {value / shipped:.1f} times the shipped fit's {shipped:.3g}"
    by = f" {shipped / value:.1f} times" if value else ""
    return f"{term} {value:.3g}, down{by} from the shipped fit's {shipped:.3g}{'' if value else ' (the term dropped)'}"


def _outside_physical(coefficients: Coefficients) -> list[tuple[str, str, PhysicalRange]]:
    """The fitted multipliers outside their physical range (`PHYSICAL`), in the order of `TERMS`, each with the side
    it is on (``below`` or ``above``) and that range."""
    found = []
    for term in TERMS:
        if (physical := PHYSICAL.get(term)) is None:
            continue
        value = coefficients.multiplier(term)
        below = physical.low is not None and value < physical.low
        if below or (physical.high is not None and value > physical.high):
            found.append((term, "below" if below else "above", physical))
    return found


def unphysical(coefficients: Coefficients) -> list[tuple[UnphysicalCode, str]]:
    """The fitted multipliers outside their physical range (`PHYSICAL`), in the order of `TERMS`, each with its code
    and in words: ``states 0.8 is below its physical range, 1 to 1.25: 16 to 20 bytes ...``."""
    return [(UnphysicalCode(f"{term.replace('_', '-')}-{side}-range"),
             f"{term} {coefficients.multiplier(term):g} is {side} its physical range, {physical.words()}")
            for term, side, physical in _outside_physical(coefficients)]


def implausible(coefficients: Coefficients) -> list[str]:
    """What `solve calibrate` warned of in a fit, in short words for a note where the fit is used: each multiplier
    outside its physical range (``states 0.97 below its physical range``), then each value at an edge of its
    plausible range (`at_bounds`: ``usable_env 1 at the edge of its plausible range``)."""
    return [*(f"{term} {coefficients.multiplier(term):g} {side} its physical range"
              for term, side, _ in _outside_physical(coefficients)),
            *(f"{edge} at the edge of its plausible range" for edge in at_bounds(coefficients))]


def at_first_principles(coefficients: Coefficients) -> list[str]:
    """The multipliers the fit left at their first-principles value (`PRIOR`'s 1): no observation moved them, so
    estimates rest on the derivation there, not on the cells."""
    return [term for term in TERMS if coefficients.multiplier(term) == PRIOR.multiplier(term)]


def at_token_floor(coefficients: Coefficients, models: Iterable[Model]) -> list[str]:
    """The multipliers of `PER_TOKEN_TERMS` off their first-principles 1 where the physical floor per token
    (`solver.memory.token_floor_gib`, which the fit holds them to together) binds for one of `models` (those fitted
    on), in the order of `TERMS`: the floor sets them there (their sum, where there are several), not the cells."""
    for model in models:
        tokens = token_features(model, 1, Setting(env=True, offload=False, sp=1), FLOOR_TOKENS)
        taken = sum(coefficients.multiplier(term) * tokens[term] for term in PER_TOKEN_TERMS)
        if taken <= token_floor_gib(model, FLOOR_TOKENS) * (1 + FLOOR_TOLERANCE):
            return [term for term in PER_TOKEN_TERMS if coefficients.multiplier(term) != PRIOR.multiplier(term)]
    return []


def from_shipped(coefficients: Coefficients, shipped: Coefficients) -> list[str]:
    """The coefficients (the multipliers in the order of `TERMS`, then ``usable`` and ``usable_env``) whose fitted
    value differs from the `shipped` fit's to three significant figures, each from the shipped value to the fitted
    one, in words: ``sp_buffers 6.46 to 1``."""
    found = []
    for name in (*TERMS, "usable", "usable_env"):
        was, now = (f"{each.multiplier(name):.3g}" for each in (shipped, coefficients))
        if was != now:
            found.append(f"{name} {was} to {now}")
    return found


def fit_summary(evidence: list[Observation], coefficients: Coefficients, margin: float = DEFAULT_MARGIN) -> FitSummary:
    """Count the observations the coefficients get wrong, each way (and the fits that only a `margin` of 0
    predicts), and record the range they span (what `solver.memory.beyond_calibration` compares an estimate
    with)."""
    predicted = [breakdown(o.model, o.memory_gib, o.gpus, o.setting, o.max_model_len, coefficients).fits
                 for o in evidence]
    within = [breakdown(o.model, o.memory_gib, o.gpus, o.setting, o.max_model_len, coefficients, margin).fits
              for o in evidence]
    return FitSummary(
        observations=len(evidence),
        positives=sum(o.fits for o in evidence),
        negatives=sum(not o.fits for o in evidence),
        wrong_fits=sum(p and not o.fits for p, o in zip(predicted, evidence)),
        wrong_failures=sum(o.fits and not p for p, o in zip(predicted, evidence)),
        failures_within_margin=sum(o.fits and p and not w for p, w, o in zip(predicted, within, evidence)),
        range=CalibrationRange(
            largest_model_b=max(o.model.parameters_b for o in evidence),
            least_memory_gib=round(min(o.memory_gib for o in evidence), 6),
            most_memory_gib=round(max(o.memory_gib for o in evidence), 6),
            most_gpus=max(o.gpus for o in evidence),
            largest_sp=max((o.setting.sp for o in evidence if o.fits), default=1),
            most_tokens_per_gpu=max((token_budget(o.max_model_len, o.setting.sp) for o in evidence if o.fits),
                                    default=0),
            smallest_model_b=min(o.model.parameters_b for o in evidence),
            least_vocab_size=min(o.model.vocab_size for o in evidence),
            most_vocab_size=max(o.model.vocab_size for o in evidence),
            mixture_of_experts=any(o.model.moe is not None for o in evidence),
            fewest_gpus=min(o.gpus for o in evidence),
            fit_without_sp=any(o.fits and o.setting.sp == 1 for o in evidence),
        ),
    )
