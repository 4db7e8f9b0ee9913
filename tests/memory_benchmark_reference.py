"""A plain-Python recomputation of `benchmarks/memory_model.py`'s scoring, for a test to check it cell by cell.

Written from issue 6's definition and the source document alone (`data/gpu-config-guide.zh.md`, a copy of
`shared/seed/gpu-config-guide.zh.md`; shapes from `shared/reference/facts.md` §3), sharing no code with the
benchmark or the planner's rules:

- cells: read from the source's Markdown tables (GPU type by its `##` heading, GPU count by its `###` heading);
  a cell is a set of settings (`vanilla`, `Env`, `Offload`, `SP=N`, joined by `+`) or `-`;
- the settings a cell may name: the source's list (facts §1: vanilla, Env, SP=N, Env + SP=N, Env + Offload,
  Env + Offload + SP=N) with each SP degree N > 1 that divides the GPU count and the attention heads and
  divides or is divided by the KV heads (facts §2);
- a setting's cost: `docs/concepts.md`'s relative step time at a fixed GPU count, for a dense model (the
  tables' Qwen3 models), `(1 + 1.0 offload) (1 + 0.1 (sp - 1)) (1 + 0.01 env)`;
- a prediction: the cheapest setting the predictor says fits, or `-` where none does;
- exact: the source's setting; unsafe: a cheaper one, or any setting where the source says `-`;
  conservative: a costlier one, or `-` where the source names a setting;
- Trinity's rough check, as facts §2 gives it: per GPU `16 P / n + 2 P` bytes of states (none with Offload)
  plus `2 T h (layers + 4)` of hidden states plus the larger of `8 T vocab` (logits, with entropy) and
  `4 vocab h + 80 T h` (backward), with `T = ceil(2 L / sp)`; it lets a setting through within 80% of the
  GPU's memory, 90% with Env (its unpublished optimizer-step term taken as zero).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from math import ceil
from pathlib import Path

SOURCE = Path(__file__).parent / "data" / "gpu-config-guide.zh.md"
GIB = 1024 ** 3
GPU_TYPES = {"A100 80GB": "A100-80GB", "H20 96GB": "H20-96GB"}
OFFLOAD_WEIGHT, SP_WEIGHT, ENV_WEIGHT = 1.0, 0.1, 0.01


@dataclass(frozen=True)
class Shape:
    """A Qwen3 model's shape (facts §3)."""

    hidden: int
    layers: int
    heads: int
    kv_heads: int
    parameters: float
    vocab: int = 151936


SHAPES = {
    "Qwen3-0.6B": Shape(1024, 28, 16, 8, 0.596e9),
    "Qwen3-1.7B": Shape(2048, 28, 16, 8, 1.721e9),
    "Qwen3-4B": Shape(2560, 36, 32, 8, 4.022e9),
    "Qwen3-8B": Shape(4096, 36, 32, 8, 8.191e9),
    "Qwen3-14B": Shape(5120, 40, 40, 8, 14.768e9),
}


@dataclass(frozen=True, order=True)
class Choice:
    """A setting: Env, Offload, SP degree."""

    env: bool
    offload: bool
    sp: int


@dataclass(frozen=True)
class Cell:
    """One documented cell: GPU type, trainer GPUs, model, max_model_len, and its setting (None for ``-``)."""

    gpu: str
    gpus: int
    model: str
    length: int
    setting: Choice | None


def parse_setting(text: str) -> Choice | None:
    """A cell's text as a setting, or None for ``-``."""
    text = text.strip()
    if text == "-":
        return None
    env = offload = False
    sp = 1
    for part in (part.strip() for part in text.split("+")):
        if part == "Env":
            env = True
        elif part == "Offload":
            offload = True
        elif part.startswith("SP="):
            sp = int(part[3:])
        elif part != "vanilla":
            raise ValueError(f"unknown setting {part!r} in {text!r}")
    return Choice(env, offload, sp)


def source_cells(path: Path = SOURCE) -> list[Cell]:
    """Every cell of the source's tables, in reading order."""
    cells: list[Cell] = []
    gpu = None
    gpus = 0
    header: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            gpu = next((name for heading, name in GPU_TYPES.items() if heading in line), None)
        elif (found := re.match(r"### (\d+) 张 GPU", line)) is not None:
            gpus, header = int(found.group(1)), []
        elif gpu is not None and line.startswith("|") and "max_model_len" in line:
            header = [column.strip() for column in line.strip("|").split("|")[1:]]
        elif gpu is not None and header and re.match(r"\|\s*\d+\s*\|", line):
            values = [value.strip() for value in line.strip().strip("|").split("|")]
            cells += [Cell(gpu, gpus, model, int(values[0]), parse_setting(text))
                      for model, text in zip(header, values[1:], strict=True)]
    return cells


def sp_allowed(shape: Shape, gpus: int, sp: int) -> bool:
    """Facts §2: SP divides the GPUs and the heads; KV heads divide SP or SP divides them."""
    return gpus % sp == 0 and shape.heads % sp == 0 and (shape.kv_heads % sp == 0 or sp % shape.kv_heads == 0)


def cost(choice: Choice) -> float:
    """docs/concepts.md's relative step time at a fixed GPU count."""
    return (1 + OFFLOAD_WEIGHT * choice.offload) * (1 + SP_WEIGHT * (choice.sp - 1)) * (1 + ENV_WEIGHT * choice.env)


def candidates(shape: Shape, gpus: int) -> list[Choice]:
    """The settings of the source's list allowed on `gpus` GPUs, cheapest first."""
    found = [Choice(env, offload, sp) for sp in range(1, gpus + 1) if sp_allowed(shape, gpus, sp)
             for env, offload in ((False, False), (True, False), (True, True))]
    return sorted(found, key=cost)


def cheapest(shape: Shape, gpus: int, fits: Callable[[Choice], bool]) -> Choice | None:
    """The cheapest allowed setting `fits` accepts, or None."""
    return next((choice for choice in candidates(shape, gpus) if fits(choice)), None)


def classify(documented: Choice | None, predicted: Choice | None) -> str:
    """'exact', 'conservative' or 'unsafe', by issue 6's definition."""
    if predicted == documented:
        return "exact"
    if documented is None:
        return "unsafe"
    if predicted is None:
        return "conservative"
    return "unsafe" if cost(predicted) < cost(documented) else "conservative"


def trinity_gib(shape: Shape, gpus: int, choice: Choice, length: int) -> float:
    """Trinity's rough estimate of one GPU's peak (facts §2), GiB."""
    tokens = ceil(2 * length / choice.sp)
    states = 0.0 if choice.offload else 16 * shape.parameters / gpus + 2 * shape.parameters
    hidden_states = 2 * tokens * shape.hidden * (shape.layers + 4)
    logits = 8 * tokens * shape.vocab
    backward = 4 * shape.vocab * shape.hidden + 80 * tokens * shape.hidden
    return (states + hidden_states + max(logits, backward)) / GIB


def trinity_fits(shape: Shape, memory_gib: float, gpus: int, choice: Choice, length: int) -> bool:
    """Trinity's rough check lets `choice` through: its estimate within 80% of the memory, 90% with Env."""
    return trinity_gib(shape, gpus, choice, length) <= memory_gib * (0.9 if choice.env else 0.8)
