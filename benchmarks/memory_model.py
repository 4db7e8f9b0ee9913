"""Validation of the memory model: calibrate on some documented cells, predict the others.

Run from the repository root with the package installed:  python benchmarks/memory_model.py [--margin F]
For each split it fits the coefficients on the training cells only, then predicts, for every held-out
cell, what the source's procedure would have written (the first setting of the escalation order that
fits with the safety margin, by default the planner's, or '-'), and counts predictions that are exact,
conservative (a costlier setting, or '-' where the source has a setting) or unsafe (a cheaper setting,
or a setting where the source has '-'). Trinity's own rough check (GPUMemoryValidator in Trinity-RFT's
config_validator.py) is scored on the same held-out cells as the baseline. Two more columns score the
choice estimates make (Env on): the first setting with Env that fits, against the documented setting with
Env turned on. Rows below the eleven splits extrapolate further: to larger models and more GPUs at once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from rich.console import Console
from rich.table import Table

from solver.calibrate import calibrate, observations
from solver.memory import GIB, breakdown
from solver.rules import token_budget, tried_settings
from solver.tables import DEFAULT_MARGIN, ESCALATION_ORDER, Catalog, Coefficients, Model, Setting, load_catalog

Keep = Callable[[str, int, str], bool]
ORDER = [setting.label for setting in ESCALATION_ORDER]


def predicted_cell(model: Model, memory_gib: float, gpus: int, max_model_len: int, coefficients: Coefficients,
                   margin: float = DEFAULT_MARGIN, env_only: bool = False) -> Setting | None:
    """What the source's procedure would write in the cell, by the model: the first setting in the
    escalation order (that the SP rules allow; with `env_only`, only those with Env, as estimates are made)
    predicted to fit with the safety `margin`, or None for ``-``."""
    for setting in tried_settings(model, gpus):
        if (setting.env or not env_only) and breakdown(model, memory_gib, gpus, setting, max_model_len, coefficients,
                                                       margin).fits:
            return setting
    return None


def predictor(coefficients: Coefficients, margin: float,
              env_only: bool = False) -> Callable[[Model, float, int, int], Setting | None]:
    """`predicted_cell` with the fitted `coefficients`, `margin` and `env_only` given, as `score` calls it."""
    def predict(model: Model, memory_gib: float, gpus: int, max_model_len: int) -> Setting | None:
        return predicted_cell(model, memory_gib, gpus, max_model_len, coefficients, margin, env_only)
    return predict


def with_env(setting: Setting | None) -> Setting | None:
    """The documented `setting` as an estimate would take it: with Env on (a setting that trains without Env
    trains with it; estimates never go without Env unless asked, `solver.memory.estimates_setting`)."""
    return None if setting is None else Setting(env=True, offload=setting.offload, sp=setting.sp)


def trinity_check_gib(model: Model, gpus: int, setting: Setting, max_model_len: int) -> tuple[float, float]:
    """Trinity's own rough memory check (``GPUMemoryValidator`` in Trinity-RFT's ``config_validator.py``):
    (estimated GiB per GPU, fraction of memory it allows: 0.8, or 0.9 with Env). The optimizer-step term it
    takes the maximum with is not published; it is taken as zero here. Logits take 8 bytes per token and
    vocabulary entry, facts §2's figure with entropy loss (10 without: a weaker baseline)."""
    tokens = token_budget(max_model_len, setting.sp)
    parameters = model.parameters_b * 1e9
    states = 0.0 if setting.offload else 16 * parameters / gpus + 2 * parameters
    hidden_states = 2 * tokens * model.hidden_size * (model.num_layers + 4)
    logits = 8 * tokens * model.vocab_size
    backward = 4 * model.vocab_size * model.hidden_size + 80 * tokens * model.hidden_size
    activations = hidden_states + max(logits, backward)
    return (states + activations) / GIB, 0.9 if setting.env else 0.8


def trinity_cell(model: Model, memory_gib: float, gpus: int, length: int) -> Setting | None:
    """What Trinity's rough check would write: the first allowed setting it lets through."""
    for setting in tried_settings(model, gpus):
        needed, fraction = trinity_check_gib(model, gpus, setting, length)
        if needed <= memory_gib * fraction:
            return setting
    return None


def outcomes(catalog: Catalog, keep: Keep, predict: Callable[[Model, float, int, int], Setting | None],
             documented_as: Callable[[Setting | None], Setting | None] = lambda setting: setting
             ) -> list[tuple[str, int, str, int, Setting | None, Setting | None, str]]:
    """Every cell `keep` accepts as (GPU type, GPUs, model, max_model_len, documented, predicted, outcome), the
    cell's setting taken as `documented_as` gives it, the outcome 'exact', 'conservative' or 'unsafe'."""
    found = []
    for gpu in catalog.documented_gpu_types:
        for table in gpu.tables:
            for name in table.models:
                if not keep(gpu.name, table.gpus, name):
                    continue
                model = catalog.model(name)
                for row in table.rows:
                    documented = documented_as(row.setting(name))
                    predicted = predict(model, gpu.memory_gib, table.gpus, row.max_model_len)
                    if predicted == documented:
                        outcome = "exact"
                    elif documented is None or (predicted is not None and
                                                ORDER.index(predicted.label) < ORDER.index(documented.label)):
                        outcome = "unsafe"
                    else:
                        outcome = "conservative"
                    found.append((gpu.name, table.gpus, name, row.max_model_len, documented, predicted, outcome))
    return found


def score(catalog: Catalog, keep: Keep, predict: Callable[[Model, float, int, int], Setting | None],
          documented_as: Callable[[Setting | None], Setting | None] = lambda setting: setting) -> tuple:
    """(cells, exact, conservative, unsafe) shares over the cells `keep` accepts (`outcomes`)."""
    found = [cell[-1] for cell in outcomes(catalog, keep, predict, documented_as)]
    total = len(found)
    return (total, *(found.count(outcome) / total for outcome in ("exact", "conservative", "unsafe")))


def splits(catalog: Catalog) -> list[tuple[str, Keep, Keep]]:
    """(name, training cells, held-out cells) for every split."""
    found: list[tuple[str, Keep, Keep]] = [
        ("fit A100, predict H20", lambda g, n, m: g == "A100-80GB", lambda g, n, m: g == "H20-96GB"),
        ("fit H20, predict A100", lambda g, n, m: g == "H20-96GB", lambda g, n, m: g == "A100-80GB"),
    ]
    for count in (1, 2, 4, 6):
        found.append((f"leave out {count} GPU{'s' if count > 1 else ''}",
                      lambda g, n, m, c=count: n != c, lambda g, n, m, c=count: n == c))
    for model in ("Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B"):
        found.append((f"leave out {model}", lambda g, n, m, k=model: m != k, lambda g, n, m, k=model: m == k))
    found.append(("all cells, in sample", lambda g, n, m: True, lambda g, n, m: True))
    return found


SMALL_MODELS = ("Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B")


def extrapolating_splits() -> list[tuple[str, Keep, Keep]]:
    """(name, training cells, held-out cells) for splits that extrapolate as far as estimates beyond the tables
    do: to models 2 to 3.5 times the largest fitted, to 2 or 3 times the GPUs and twice the SP degree, and both
    (and to the other GPU type too)."""
    def small(m: str) -> bool:
        return m in SMALL_MODELS

    return [
        ("fit 0.6B-4B, predict 8B and 14B", lambda g, n, m: small(m), lambda g, n, m: not small(m)),
        ("fit 1-2 GPUs, predict 4 and 6", lambda g, n, m: n <= 2, lambda g, n, m: n >= 4),
        ("fit 0.6B-4B on 1-2 GPUs, predict 8B-14B on 4-6", lambda g, n, m: small(m) and n <= 2,
         lambda g, n, m: not small(m) and n >= 4),
        ("  the same, fit on A100, predict H20", lambda g, n, m: g == "A100-80GB" and small(m) and n <= 2,
         lambda g, n, m: g == "H20-96GB" and not small(m) and n >= 4),
        ("  the same, fit on H20, predict A100", lambda g, n, m: g == "H20-96GB" and small(m) and n <= 2,
         lambda g, n, m: g == "A100-80GB" and not small(m) and n >= 4),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN,
                        help=f"safety margin of predictions, a fraction of usable memory (default {DEFAULT_MARGIN})")
    margin = parser.parse_args().margin
    catalog = load_catalog()
    table = Table(title=f"memory model: held-out cells predicted with margin {margin:g} "
                        "(targets: exact >= 90%, unsafe <= 2%)")
    for column in ("split", "cells", "exact", "conservative", "unsafe", "Trinity exact", "Trinity unsafe",
                   "Env on: exact", "Env on: unsafe"):
        table.add_column(column, justify="left" if column == "split" else "right", no_wrap=column == "split")
    eleven = splits(catalog)
    for index, (name, train, test) in enumerate([*eleven, *extrapolating_splits()]):
        coefficients, _ = calibrate(observations(catalog, train))
        cells, exact, conservative, unsafe = score(catalog, test, predictor(coefficients, margin))
        _, t_exact, _, t_unsafe = score(catalog, test, trinity_cell)
        _, e_exact, _, e_unsafe = score(catalog, test, predictor(coefficients, margin, env_only=True), with_env)
        table.add_row(name, str(cells), f"{exact:.1%}", f"{conservative:.1%}", f"{unsafe:.1%}", f"{t_exact:.1%}",
                      f"{t_unsafe:.1%}", f"{e_exact:.1%}", f"{e_unsafe:.1%}", end_section=index == len(eleven) - 1)
    Console(width=max(Console().width, 150)).print(table)


if __name__ == "__main__":
    main()
