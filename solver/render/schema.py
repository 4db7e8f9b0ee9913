"""The JSON Schemas of what `solve`, `solve cluster`, `solve memory`, `solve map` and `solve calibrate` print with
--json."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from solver.memory import MemoryAnswer
from solver.results import Answer, Calibration, ClusterResult, GpuMap, PurchaseResult
from solver.tables import chosen

JSON_SCHEMA_TYPES: dict[str, Any] = {"solve": list[Answer], "cluster": ClusterResult, "cluster-buy": PurchaseResult,
                                     "memory": MemoryAnswer, "map": list[GpuMap], "calibrate": Calibration}
"""The result type of each command whose --json a JSON Schema describes (`json_schema`): ``solve``'s array of answers,
``solve cluster``'s placement, ``solve cluster --buy``'s purchase, ``solve memory``'s breakdown, ``solve map``'s array
of maps and ``solve calibrate``'s fit."""


def json_schema(command: str) -> str:
    """The JSON Schema (draft 2020-12) of what ``solve`` (`command` ``"solve"``), ``solve cluster`` (``"cluster"``;
    with --buy ``"cluster-buy"``), ``solve memory`` (``"memory"``), ``solve map`` (``"map"``) or ``solve calibrate``
    (``"calibrate"``) prints with --json, as text: pydantic's schema of its result type (`JSON_SCHEMA_TYPES`) for
    serialization, with the fields' descriptions (docs/schema/ holds them, as tests/shown_output.py writes them);
    `QueryError` naming those six for another `command` (in any case: `chosen`)."""
    command = chosen("command", command, tuple(JSON_SCHEMA_TYPES))  # "Solve" too, as every choice of the API
    schema = TypeAdapter(JSON_SCHEMA_TYPES[command]).json_schema(mode="serialization")
    heading = {"$schema": "https://json-schema.org/draft/2020-12/schema",
               "title": f"solve{'' if command == 'solve' else ' ' + command.replace('-', ' --')} --json"}
    return json.dumps({**heading, **schema, "title": heading["title"]}, indent=2) + "\n"  # the command, not the type
