"""The JSON Schemas of `solve --json` and `solve cluster --json`."""

from __future__ import annotations

import json
from typing import Any

from pydantic import TypeAdapter

from solver.results import Answer, ClusterResult

JSON_SCHEMA_TYPES: dict[str, Any] = {"solve": list[Answer], "cluster": ClusterResult}
"""The result type of each command whose --json a JSON Schema describes (`json_schema`): ``solve``'s array of answers
and ``solve cluster``'s placement."""


def json_schema(command: str) -> str:
    """The JSON Schema (draft 2020-12) of what ``solve`` (`command` ``"solve"``) or ``solve cluster``
    (``"cluster"``) prints with --json, as text: pydantic's schema of its result type for serialization, with the
    fields' descriptions (docs/schema/ holds them, as tests/shown_output.py writes them)."""
    schema = TypeAdapter(JSON_SCHEMA_TYPES[command]).json_schema(mode="serialization")
    heading = {"$schema": "https://json-schema.org/draft/2020-12/schema",
               "title": f"solve{'' if command == 'solve' else ' ' + command} --json"}
    return json.dumps({**heading, **schema}, indent=2) + "\n"
