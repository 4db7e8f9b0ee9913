"""rft-solver: plan trainer GPU layouts for Trinity-RFT (Env, FSDP2 Offload, Ulysses SP) with OR-Tools CP-SAT.

The library API (docs/api.md in rft-solver's source)::

    import solver
    (answer, *_) = solver.plan("4B", objective="max_len", budget_gpus=6, gpu="a100")
    answer.plans[0].max_model_len          # 102400
    solver.place("fleet.yaml").placements  # cluster capacity planning
    solver.estimate_memory("8B", "h100", 8, 131072, sp=8, env=True).fits
    solver.calibrate_memory_model(["my-cells.yaml"]).memory_model  # for memory=

Names are imported on first use, so that ``import solver`` stays cheap (OR-Tools loads only to solve);
type checkers read the same names from the imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "plan": "solver.api",
    "place": "solver.api",
    "buy_nodes": "solver.api",
    "estimate_memory": "solver.api",
    "memory_answer": "solver.api",
    "map_plans": "solver.api",
    "trinity_config": "solver.api",
    "placement_configs": "solver.api",
    "trinity_settings": "solver.api",
    "placement_settings": "solver.api",
    "calibrate_memory_model": "solver.api",
    "check_config": "solver.api",
    "answers_text": "solver.render",
    "cluster_text": "solver.render",
    "memory_text": "solver.render",
    "map_text": "solver.render",
    "make_query": "solver.query",
    "Query": "solver.query",
    "Answer": "solver.results",
    "Plan": "solver.results",
    "HostRamAssumed": "solver.results",
    "Reason": "solver.results",
    "CautionCode": "solver.results",
    "ReasonCode": "solver.results",
    "UnplacedCode": "solver.results",
    "MoveCode": "solver.results",
    "StayCode": "solver.results",
    "PoolCode": "solver.results",
    "BeyondCode": "solver.results",
    "UnphysicalCode": "solver.results",
    "ConfigProblemCode": "solver.query",
    "ConfigAdapter": "solver.query",
    "BrokenRuleCode": "solver.rules",
    "ClusterResult": "solver.results",
    "Placement": "solver.results",
    "Unplaced": "solver.results",
    "UnplacedPool": "solver.results",
    "FitsWith": "solver.results",
    "RolloutEngines": "solver.results",
    "PoolUse": "solver.results",
    "JobGone": "solver.results",
    "RunsAt": "solver.results",
    "PurchaseResult": "solver.results",
    "PoolPurchase": "solver.results",
    "TablesVerdict": "solver.rules",
    "SourceCell": "solver.rules",
    "CurrentSettings": "solver.results",
    "ConfigCheck": "solver.results",
    "Alternatives": "solver.results",
    "RolloutKept": "solver.results",
    "RoomKept": "solver.results",
    "Calibration": "solver.results",
    "GpuMap": "solver.results",
    "ModelMapRow": "solver.results",
    "LengthMapRow": "solver.results",
    "Pins": "solver.query",
    "Undecided": "solver.tables",
    "Objective": "solver.query",
    "EstimateMode": "solver.query",
    "TokenBudgetMode": "solver.tables",
    "TrinityVersion": "solver.tables",
    "Breakdown": "solver.memory",
    "MemoryEstimate": "solver.memory",
    "MemoryAnswer": "solver.memory",
    "MemoryQuestion": "solver.memory",
    "Terms": "solver.memory",
    "Catalog": "solver.tables",
    "Fleet": "solver.tables",
    "Setting": "solver.tables",
    "Weights": "solver.tables",
    "Model": "solver.tables",
    "GpuType": "solver.tables",
    "described_gpu_type": "solver.tables",
    "MemoryModel": "solver.tables",
    "Coefficients": "solver.tables",
    "FitSummary": "solver.tables",
    "CalibrationRange": "solver.tables",
    "load_catalog": "solver.tables",
    "load_fleet": "solver.tables",
    "load_weights": "solver.tables",
    "load_memory_model": "solver.tables",
    "load_model_config": "solver.tables",
    "Pool": "solver.tables",
    "Job": "solver.tables",
    "OneLineError": "solver.tables",
    "QueryError": "solver.tables",
    "TableError": "solver.tables",
    "ConfigError": "solver.trinity",
    "TrinitySettings": "solver.results",
    "ApplySettings": "solver.results",
    "ConfigKeyChange": "solver.results",
}
__all__ = ["__version__", *_EXPORTS]

_MODULES = frozenset({"tables", "rules", "query", "results", "memory", "model", "clock", "solve", "explain", "maps",
                      "cluster", "calibrate", "trinity", "api", "render", "cli"})
"""The package's modules, which `import solver` alone gives as attributes too (``solver.api.config_query``, as
docs/api.md writes it), each imported on first use."""

if TYPE_CHECKING:  # the names in _EXPORTS, for type checkers (tests/test_api.py checks that they agree)
    from solver.api import buy_nodes as buy_nodes
    from solver.api import calibrate_memory_model as calibrate_memory_model
    from solver.api import check_config as check_config
    from solver.api import estimate_memory as estimate_memory
    from solver.api import map_plans as map_plans
    from solver.api import memory_answer as memory_answer
    from solver.api import place as place
    from solver.api import placement_configs as placement_configs
    from solver.api import placement_settings as placement_settings
    from solver.api import plan as plan
    from solver.api import trinity_config as trinity_config
    from solver.api import trinity_settings as trinity_settings
    from solver.memory import Breakdown as Breakdown
    from solver.memory import MemoryAnswer as MemoryAnswer
    from solver.memory import MemoryEstimate as MemoryEstimate
    from solver.memory import MemoryQuestion as MemoryQuestion
    from solver.memory import Terms as Terms
    from solver.query import ConfigAdapter as ConfigAdapter
    from solver.query import ConfigProblemCode as ConfigProblemCode
    from solver.query import EstimateMode as EstimateMode
    from solver.query import Objective as Objective
    from solver.query import Pins as Pins
    from solver.query import Query as Query
    from solver.query import make_query as make_query
    from solver.render import answers_text as answers_text
    from solver.render import cluster_text as cluster_text
    from solver.render import map_text as map_text
    from solver.render import memory_text as memory_text
    from solver.results import Alternatives as Alternatives
    from solver.results import Answer as Answer
    from solver.results import ApplySettings as ApplySettings
    from solver.results import BeyondCode as BeyondCode
    from solver.results import Calibration as Calibration
    from solver.results import CautionCode as CautionCode
    from solver.results import ClusterResult as ClusterResult
    from solver.results import ConfigCheck as ConfigCheck
    from solver.results import ConfigKeyChange as ConfigKeyChange
    from solver.results import CurrentSettings as CurrentSettings
    from solver.results import FitsWith as FitsWith
    from solver.results import GpuMap as GpuMap
    from solver.results import HostRamAssumed as HostRamAssumed
    from solver.results import JobGone as JobGone
    from solver.results import LengthMapRow as LengthMapRow
    from solver.results import ModelMapRow as ModelMapRow
    from solver.results import MoveCode as MoveCode
    from solver.results import Placement as Placement
    from solver.results import Plan as Plan
    from solver.results import PoolCode as PoolCode
    from solver.results import PoolPurchase as PoolPurchase
    from solver.results import PoolUse as PoolUse
    from solver.results import PurchaseResult as PurchaseResult
    from solver.results import Reason as Reason
    from solver.results import ReasonCode as ReasonCode
    from solver.results import RolloutEngines as RolloutEngines
    from solver.results import RolloutKept as RolloutKept
    from solver.results import RoomKept as RoomKept
    from solver.results import RunsAt as RunsAt
    from solver.results import StayCode as StayCode
    from solver.results import TrinitySettings as TrinitySettings
    from solver.results import UnphysicalCode as UnphysicalCode
    from solver.results import Unplaced as Unplaced
    from solver.results import UnplacedCode as UnplacedCode
    from solver.results import UnplacedPool as UnplacedPool
    from solver.rules import BrokenRuleCode as BrokenRuleCode
    from solver.rules import SourceCell as SourceCell
    from solver.rules import TablesVerdict as TablesVerdict
    from solver.tables import CalibrationRange as CalibrationRange
    from solver.tables import Catalog as Catalog
    from solver.tables import Coefficients as Coefficients
    from solver.tables import FitSummary as FitSummary
    from solver.tables import Fleet as Fleet
    from solver.tables import GpuType as GpuType
    from solver.tables import Job as Job
    from solver.tables import MemoryModel as MemoryModel
    from solver.tables import Model as Model
    from solver.tables import OneLineError as OneLineError
    from solver.tables import Pool as Pool
    from solver.tables import QueryError as QueryError
    from solver.tables import Setting as Setting
    from solver.tables import TableError as TableError
    from solver.tables import TokenBudgetMode as TokenBudgetMode
    from solver.tables import TrinityVersion as TrinityVersion
    from solver.tables import Undecided as Undecided
    from solver.tables import Weights as Weights
    from solver.tables import described_gpu_type as described_gpu_type
    from solver.tables import load_catalog as load_catalog
    from solver.tables import load_fleet as load_fleet
    from solver.tables import load_memory_model as load_memory_model
    from solver.tables import load_model_config as load_model_config
    from solver.tables import load_weights as load_weights
    from solver.trinity import ConfigError as ConfigError
else:  # hidden from type checkers, which would otherwise take any misspelt name for Any

    def __getattr__(name: str) -> Any:
        if name in _EXPORTS:
            return getattr(import_module(_EXPORTS[name]), name)
        if name in _MODULES:  # as an import of it would set it, whatever was imported before
            return import_module(f"solver.{name}")
        raise AttributeError(f"module 'solver' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS, *_MODULES})
