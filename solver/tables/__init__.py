"""The documented tables: YAML files in, validated frozen pydantic models out.

This is the only package that reads files. Everything is checked on load; a broken file raises
`TableError` with one line naming the file, the table and the row at fault. Its modules, each using only
those before it: `text`, `schema`, `inputs`, `reading`, `catalog`, `loaders`, `model_config`, `fleets`.
The names other packages use are here, as `solver.tables.X`; the rest are imported from their modules. The
YAML it ships is the repository's top-level ``tables/`` folder, installed as ``solver.data``.
"""

from __future__ import annotations

from solver.tables.catalog import Catalog, Cell, model_name_from_path, vouches_for
from solver.tables.fleets import OWN_GPU_HINT, fleet_models, load_fleet
from solver.tables.inputs import (
    AtLeast,
    CalibrationRange,
    Coefficients,
    FitSummary,
    Fleet,
    Job,
    MemoryModel,
    Pool,
    Weights,
)
from solver.tables.loaders import (
    MEMORY_MODEL_FILE,
    load_catalog,
    load_memory_model,
    load_weights,
    shipped_tables_directory,
)
from solver.tables.model_config import (
    load_model_config,
    model_config_file,
)
from solver.tables.reading import (
    NUMBER_TOO_LONG,
    UniqueKeys,
    load_gpu_type,
    read_user_file,
    yaml_error_place,
    yaml_limit,
)
from solver.tables.schema import (
    CONFIG_SHAPE,
    ESCALATION_ORDER,
    LEAST_DRIVER_MIB,
    LEAST_GPU_MEMORY_GB,
    MAX_ESTIMATED_GPUS,
    MAX_GPU_MEMORY_GB,
    MAX_GPUS,
    MAX_HOST_RAM_GB,
    MAX_TOKENS,
    NO_SETTING,
    YARN_VALIDATED_FACTOR,
    YARN_VALIDATED_TOKENS,
    Frozen,
    GpuType,
    Model,
    Setting,
    Table,
    cell_text,
    described_gpu_type,
    source_words,
    sp_rule_violation,
    sp_suits_kv_heads,
)
from solver.tables.text import (
    OneLineError,
    QueryError,
    TableError,
    and_more,
    brief,
    check_types,
    counted,
    cut,
    shown_value,
)

__all__ = [
    "CONFIG_SHAPE",
    "ESCALATION_ORDER",
    "LEAST_DRIVER_MIB",
    "LEAST_GPU_MEMORY_GB",
    "MAX_ESTIMATED_GPUS",
    "MAX_GPUS",
    "MAX_GPU_MEMORY_GB",
    "MAX_HOST_RAM_GB",
    "MAX_TOKENS",
    "MEMORY_MODEL_FILE",
    "NO_SETTING",
    "NUMBER_TOO_LONG",
    "OWN_GPU_HINT",
    "YARN_VALIDATED_FACTOR",
    "YARN_VALIDATED_TOKENS",
    "AtLeast",
    "CalibrationRange",
    "Catalog",
    "Cell",
    "Coefficients",
    "FitSummary",
    "Fleet",
    "Frozen",
    "GpuType",
    "Job",
    "MemoryModel",
    "Model",
    "OneLineError",
    "Pool",
    "QueryError",
    "Setting",
    "Table",
    "TableError",
    "UniqueKeys",
    "Weights",
    "and_more",
    "brief",
    "cell_text",
    "check_types",
    "counted",
    "cut",
    "described_gpu_type",
    "fleet_models",
    "load_catalog",
    "load_fleet",
    "load_gpu_type",
    "load_memory_model",
    "load_model_config",
    "load_weights",
    "model_config_file",
    "model_name_from_path",
    "read_user_file",
    "shipped_tables_directory",
    "shown_value",
    "source_words",
    "sp_rule_violation",
    "sp_suits_kv_heads",
    "vouches_for",
    "yaml_error_place",
    "yaml_limit",
]
