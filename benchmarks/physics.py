"""Physical bounds and monotonicity of the memory model and of the planner's answers, swept beyond the tables.

Run from the repository root with the package installed:  python benchmarks/physics.py [--workers N]
It prints one table (each check, the grid it swept, the cases and the violations) and lists every violation.

Bounds: no plan is predicted to fit where the sharded states alone (16 bytes per parameter over the GPUs: bf16
parameters and gradients, fp32 master weights and Adam's two moments) exceed the GPU's memory, nor, with Offload,
where one layer's gathered bf16 weights and gradients (what FSDP2 must hold on the GPU) do; an Offload plan's host
memory counts the node's share of those 16 bytes. Monotonicity: more GPU memory, more GPUs, Offload, Env or more host
memory never make a plan stop fitting, a longer context never makes one start, and a larger model of a family never
fits where a smaller one does not at the same SP degree (the heads decide which degrees a model has).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable, Iterable
from itertools import pairwise
from multiprocessing import Pool
from typing import Any

from rich.console import Console
from rich.table import Table

import solver
from solver.memory import CEILING, GIB, GRID, breakdown, estimated_counts, host_memory_gib, longest_fitting
from solver.rules import sp_degrees
from solver.tables import Model, Setting, load_catalog, load_memory_model

CATALOG = load_catalog()
COEFFICIENTS = load_memory_model().coefficients
SHAPES = ("Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-32B", "Qwen3-30B-A3B",
          "Qwen2.5-7B", "Qwen2.5-14B", "Qwen2.5-32B", "Llama-3.1-8B", "Llama-3.1-70B")
"""The catalogue's distinct shapes (its base models, Instruct and 2507 releases share them)."""
FAMILIES = (("Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B", "Qwen3-14B", "Qwen3-32B"),
            ("Qwen2.5-7B", "Qwen2.5-14B", "Qwen2.5-32B"), ("Llama-3.1-8B", "Llama-3.1-70B"))
GPUS = tuple(gpu.name for gpu in CATALOG.gpu_types)
MEMORY = {gpu.name: gpu.memory_gib for gpu in CATALOG.gpu_types}
MEMORIES = tuple(sorted({*MEMORY.values(), 8, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160, 192, 256, 512, 1024}))
COUNTS = (1, 2, 4, 8, 16, 32)
SETTINGS = tuple((env, offload) for env in (False, True) for offload in (False, True))
Result = tuple[int, list[str]]
"""(cases checked, violations in words)."""


def floor_gib(model: Model, gpus: int, offload: bool) -> float:
    """What one GPU must hold whatever else: the states' shard, or with Offload one layer's bf16 weights and
    gradients gathered (the parameters less the embeddings', per layer)."""
    parameters = model.parameters_b * 1e9
    if not offload:
        return 16 * parameters / gpus / GIB
    embeddings = model.vocab_size * model.hidden_size * (1 if model.tied_embeddings else 2)
    return 4 * (parameters - embeddings) / model.num_layers / GIB


def longest(model: Model, memory: float, gpus: int, setting: Setting, margin: float = 0.01) -> int:
    """The memory model's longest length on the grid (0 where none fits)."""
    return longest_fitting(model, memory, gpus, setting, COEFFICIENTS, margin) or 0


def model_bounds(name: str) -> Result:
    """Memory model: every memory, count, SP degree and setting at margins 0 and 0.01 against `floor_gib`; the
    longest length fits and the next on the grid does not; an Offload host need holds the node's states."""
    model, cases, found = CATALOG.model(name), 0, []
    for memory in MEMORIES:
        for gpus in COUNTS:
            for sp in sp_degrees(model, gpus, 8):
                for (env, offload), margin in ((s, m) for s in SETTINGS for m in (0.0, 0.01)):
                    setting, cases = Setting(env=env, offload=offload, sp=sp), cases + 1
                    length = longest(model, memory, gpus, setting, margin)
                    if length and floor_gib(model, gpus, offload) > memory:
                        found.append(f"{name} on {gpus} x {memory:.1f} GiB, {setting.label}: fits {length}, though "
                                     f"{floor_gib(model, gpus, offload):.1f} GiB must be held")
                    checked = [(at, at == length) for at in (length, length + GRID) if 0 < at <= CEILING]
                    if any(breakdown(model, memory, gpus, setting, at, COEFFICIENTS, margin).fits != fitting
                           for at, fitting in checked):
                        found.append(f"{name} on {gpus} x {memory:.1f} GiB, {setting.label}: longest {length} is off")
            states = 16 * model.parameters_b * 1e9 * min(gpus, 8) / gpus / GIB
            cases += 1
            if host_memory_gib(model, gpus, 8) < states:
                found.append(f"{name} on {gpus} GPUs: Offload's host memory counts less than the states' {states:.1f}")
    return cases, found


def model_monotone(name: str) -> Result:
    """Memory model: the longest length never falls with more memory, more GPUs (every count estimates consider),
    Offload or Env, at each SP degree."""
    model, cases, found = CATALOG.model(name), 0, []
    for index, memory in enumerate(MEMORIES):
        for env, offload in SETTINGS:
            for sp in (1, 2, 4, 7, 8):
                setting, before = Setting(env=env, offload=offload, sp=sp), None
                for gpus in (n for n in estimated_counts(8) if sp in sp_degrees(model, n, 8)):
                    length, cases = longest(model, memory, gpus, setting), cases + 1
                    if before is not None and length < before[1]:
                        found.append(f"{name} {setting.label} on {memory:.1f} GiB: {before[0]} GPUs fit {before[1]}, "
                                     f"{gpus} fit {length}")
                    before = (gpus, length)
                    changed = [("Offload", memory, Setting(env=env, offload=True, sp=sp)),
                               ("Env", memory, Setting(env=True, offload=offload, sp=sp))]
                    if index + 1 < len(MEMORIES):
                        changed.append((f"{MEMORIES[index + 1]:.1f} GiB", MEMORIES[index + 1], setting))
                    for what, more, other in changed:
                        cases += 1
                        if longest(model, more, gpus, other) < length:
                            found.append(f"{name} {setting.label} on {gpus} x {memory:.1f} GiB: {what} fits less")
    return cases, found


def model_family(pair: tuple[str, str]) -> Result:
    """Memory model: the larger of two models of a family never fits longer at the same count, SP and setting."""
    small, large = (CATALOG.model(name) for name in pair)
    cases, found = 0, []
    for memory in MEMORIES:
        for gpus in estimated_counts(8):
            for sp in sorted(set(sp_degrees(small, gpus, 8)) & set(sp_degrees(large, gpus, 8))):
                for env, offload in SETTINGS:
                    setting, cases = Setting(env=env, offload=offload, sp=sp), cases + 1
                    if longest(large, memory, gpus, setting) > longest(small, memory, gpus, setting):
                        found.append(f"{large.name} fits longer than {small.name} on {gpus} x {memory:.1f} GiB, "
                                     f"{setting.label}")
    return cases, found


def plans(model: str, gpu: str, gpus: int, **pins: Any) -> tuple[solver.Plan, ...]:
    """The planner's plans (every setting's longest) for `model` on exactly `gpus` GPUs of `gpu`."""
    (answer,) = solver.plan(model, gpu=gpu, objective="max_len", budget_gpus=gpus, exact=True, top=64,
                            catalog=CATALOG, **pins)
    return answer.plans


def longest_plan(model: str, gpu: str, gpus: int, **pins: Any) -> int:
    """The longest length the planner gives on exactly `gpus` GPUs (0 where none)."""
    return max((plan.max_model_len for plan in plans(model, gpu, gpus, **pins)), default=0)


def planner_bounds(job: tuple[str, str, int, float | None]) -> Result:
    """Planner: every plan on exactly the count against `floor_gib`; an Offload plan's host memory holds the node's
    states, and with `--host-ram` every plan's need is within it."""
    name, gpu, gpus, host_ram = job
    model, found = CATALOG.model(name), []
    given = plans(name, gpu, gpus, host_ram_gb=host_ram)
    for plan in given:
        where = f"{name} on {gpus} {gpu}, {plan.setting.label} at {plan.max_model_len} ({plan.evidence})"
        if floor_gib(model, gpus, plan.offload) > MEMORY[gpu]:
            found.append(f"{where}: {floor_gib(model, gpus, plan.offload):.1f} GiB must be held")
        states = 16 * model.parameters_b * 1e9 * min(gpus, 8) / gpus / GIB
        if plan.offload and (plan.host_memory_gb is None or plan.host_memory_gb < states):
            found.append(f"{where}: host memory {plan.host_memory_gb} GiB, less than the states' {states:.1f}")
        if host_ram is not None and (plan.host_memory_gb or 0) > host_ram:
            found.append(f"{where}: host memory {plan.host_memory_gb} GiB, more than --host-ram {host_ram}")
    return len(given), found


def planner_counts(job: tuple[str, str]) -> Result:
    """Planner: per pinned SP degree, Env and Offload, the longest length on exactly 1, 2, 3, 4, 6, 8, 16 and 32
    GPUs never falls with more GPUs nor with Offload; and the longest within 8 GPUs never falls with more host
    memory."""
    name, gpu = job
    model, cases, found = CATALOG.model(name), 0, []
    for env in (True, False):
        for sp in (1, 2, 4, 8):
            before: tuple[int, dict[bool, int]] | None = None
            for gpus in (n for n in (1, 2, 3, 4, 6, 8, 16, 32) if sp in sp_degrees(model, n, 8)):
                lengths = {offload: longest_plan(name, gpu, gpus, sp=sp, env=env, offload=offload)
                           for offload in (False, True)}
                cases += 2
                label = Setting(env=env, sp=sp).label
                if lengths[True] < lengths[False]:
                    found.append(f"{name} on {gpus} {gpu}: {label} {lengths[False]}, with Offload {lengths[True]}")
                if before is not None:
                    fewer, their = before
                    why = " (a 1-GPU table vouches for no other count)" if fewer == 1 else ""
                    found += [f"{name} on {gpu}, {Setting(env=env, offload=offload, sp=sp).label}: {fewer} GPUs "
                              f"{their[offload]}, {gpus} GPUs {length}{why}"
                              for offload, length in lengths.items() if length < their[offload]]
                before = (gpus, lengths)
    before_ram: tuple[int, int] | None = None
    for host_ram in (16, 32, 64, 128, 256, 512, 1024, 2048):
        (answer,) = solver.plan(name, gpu=gpu, objective="max_len", budget_gpus=8, catalog=CATALOG,
                                host_ram_gb=float(host_ram))
        length, cases = answer.plans[0].max_model_len if answer.plans else 0, cases + 1
        if before_ram is not None and length < before_ram[1]:
            found.append(f"{name} on {gpu}: --host-ram {before_ram[0]} {before_ram[1]}, {host_ram} {length}")
        before_ram = (host_ram, length)
    return cases, found


def planner_lengths(job: tuple[str, str]) -> Result:
    """Planner: the cheapest plan within 8 GPUs at growing lengths: once none trains, none trains longer."""
    name, gpu = job
    lengths = (4096, 8192, 16384, 24576, 32768, 49152, 65536, 98304, 131072, 196608, 262144)
    trains = [bool(solver.plan(name, gpu=gpu, budget_gpus=8, max_model_len=length, catalog=CATALOG)[0].plans)
              for length in lengths]
    return len(lengths), [f"{name} on {gpu}: trains at {lengths[index + 1]}, not at {lengths[index]}"
                          for index in range(len(lengths) - 1) if trains[index + 1] and not trains[index]]


def planner_memory(job: tuple[str, int]) -> Result:
    """Planner: over the catalogue's GPU types by their memory, the longest length on exactly the count never falls
    with more memory."""
    name, gpus = job
    ranked = sorted(GPUS, key=MEMORY.__getitem__)
    lengths = {gpu: longest_plan(name, gpu, gpus) for gpu in ranked}
    return len(ranked), [f"{name} on {gpus} GPUs: {less} ({MEMORY[less]:.1f} GiB) {lengths[less]}, {more} "
                         f"({MEMORY[more]:.1f} GiB) {lengths[more]}"
                         for index, more in enumerate(ranked) for less in ranked[:index]
                         if MEMORY[more] > MEMORY[less] and lengths[more] < lengths[less]]


def planner_family(job: tuple[str, str, str, int]) -> Result:
    """Planner: at each SP degree both models allow, the larger never gets a longer length on exactly the count."""
    small, large, gpu, gpus = job
    common = sorted(set(sp_degrees(CATALOG.model(small), gpus, 8)) & set(sp_degrees(CATALOG.model(large), gpus, 8)))
    found = [f"{large} {b} > {small} {a} on {gpus} {gpu} at SP={sp}" for sp in common
             if (b := longest_plan(large, gpu, gpus, sp=sp)) > (a := longest_plan(small, gpu, gpus, sp=sp))]
    return 2 * len(common), found


def pairs() -> Iterable[tuple[str, str]]:
    """Each model of a family with the next larger one."""
    return (pair for family in FAMILIES for pair in pairwise(family))


CHECKS: tuple[tuple[str, str, Callable[..., Result], Callable[[], list]], ...] = (
    ("memory model: bounds", (f"{len(SHAPES)} models x {len(MEMORIES)} memories x counts {COUNTS} x SP x 4 settings "
                              "x 2 margins"), model_bounds, lambda: list(SHAPES)),
    ("memory model: monotone", "memory, GPUs (to 64), Offload, Env; SP 1, 2, 4, 7, 8", model_monotone,
     lambda: list(SHAPES)),
    ("memory model: family", "next larger model, same count (to 64), SP and setting", model_family,
     lambda: list(pairs())),
    ("planner: bounds", f"{len(SHAPES)} models x {len(GPUS)} GPU types x counts {COUNTS}, every setting's plan",
     planner_bounds, lambda: [(m, g, n, None) for m in SHAPES for g in GPUS for n in COUNTS]),
    ("planner: bounds, --host-ram", "A100, H20, H100 x 2, 8, 16 GPUs x 64, 256, 1024 GiB", planner_bounds,
     lambda: [(m, g, n, h) for m in SHAPES for g in ("A100-80GB", "H20-96GB", "H100-80GB") for n in (2, 8, 16)
              for h in (64.0, 256.0, 1024.0)]),
    ("planner: counts, Offload, host", "every GPU type, pinned settings on 1 to 32 GPUs; --host-ram 16 to 2048",
     planner_counts, lambda: [(m, g) for m in SHAPES for g in GPUS]),
    ("planner: lengths", "every GPU type, 11 lengths 4096 to 262144 within 8 GPUs", planner_lengths,
     lambda: [(m, g) for m in SHAPES for g in GPUS]),
    ("planner: GPU memory", "the catalogue's GPU types by memory, exactly 1 to 16 GPUs", planner_memory,
     lambda: [(m, n) for m in SHAPES for n in (1, 2, 4, 6, 8, 16)]),
    ("planner: family", "next larger model at each common SP, every GPU type, 1 to 16 GPUs", planner_family,
     lambda: [(*pair, g, n) for pair in pairs() for g in GPUS for n in (1, 2, 4, 8, 16)]),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="processes (default: the CPUs)")
    workers = parser.parse_args().workers
    table = Table("check", "grid", "cases", "violations", "seconds")
    listed: list[str] = []
    with Pool(workers) as pool:
        for name, grid, check, jobs in CHECKS:
            started = time.perf_counter()
            results = pool.map(check, jobs(), chunksize=1)
            found = [violation for _, violations in results for violation in violations]
            table.add_row(name, grid, str(sum(cases for cases, _ in results)), str(len(found)),
                          f"{time.perf_counter() - started:.0f}")
            listed += [f"{name}: {violation}" for violation in found]
    Console(width=160).print(table)
    for violation in listed:
        print(violation)


if __name__ == "__main__":
    main()
