"""rft-solver: plan trainer GPU layouts for Trinity-RFT (Env, FSDP2 Offload, Ulysses SP) with OR-Tools CP-SAT.

The library API (see docs/api.md)::

    import solver
    (answer, *_) = solver.plan("4B", objective="max_len", budget_gpus=6, gpu="a100")
    answer.plans[0].max_model_len          # 102400
    solver.place("fleet.yaml").placements  # cluster capacity planning
    solver.estimate_memory("8B", "h100", 8, 131072, sp=8, env=True).fits

Names are imported on first use, so that ``import solver`` stays cheap (OR-Tools loads only to solve).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {
    "plan": "solver.api",
    "place": "solver.api",
    "estimate_memory": "solver.api",
    "make_query": "solver.query",
    "Query": "solver.query",
    "Answer": "solver.query",
    "Plan": "solver.query",
    "Reason": "solver.query",
    "ClusterResult": "solver.query",
    "Placement": "solver.query",
    "Breakdown": "solver.memory",
    "MemoryEstimate": "solver.memory",
    "Catalog": "solver.tables",
    "Fleet": "solver.tables",
    "Setting": "solver.tables",
    "Weights": "solver.tables",
    "MemoryModel": "solver.tables",
    "load_catalog": "solver.tables",
    "load_fleet": "solver.tables",
    "load_weights": "solver.tables",
    "load_memory_model": "solver.tables",
    "QueryError": "solver.tables",
    "TableError": "solver.tables",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'solver' has no attribute {name!r}")
