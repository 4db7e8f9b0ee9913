"""The JSON for programs (docs/json.md): the codes beside cautions and reasons, each documented and each emitted where
its words are, and the JSON Schemas of docs/schema/, in sync with the code and valid for real outputs."""

from __future__ import annotations

import ast
import functools
import json
import re
from enum import Enum
from pathlib import Path
from typing import Any, get_args

import pytest
from jsonschema import Draft202012Validator
from ortools.sat.python import cp_model
from pydantic import TypeAdapter, ValidationError

import solver
from solver.memory import JSON_GIB_SLACK, VERDICTS, MemoryAnswer, MemoryEstimate, MemoryQuestion
from solver.query import ConfigProblemCode, Query, make_query
from solver.render import JSON_SCHEMA_TYPES, json_schema
from solver.render.tables import cell_record
from solver.results import (
    ANSWER_LEFT_OUT_WHEN_NONE,
    MAP_LEFT_OUT_WHEN_NONE,
    PLACEMENT_LEFT_OUT_WHEN_NONE,
    PLAN_LEFT_OUT_WHEN_NONE,
    ROLLOUT_ENGINES_LEFT_OUT_WHEN_NONE,
    UNPLACED_LEFT_OUT_WHEN_NONE,
    BeyondCode,
    CautionCode,
    ConfigKeyChange,
    CurrentSettings,
    ExplainRule,
    GpuMap,
    LengthMapRow,
    ModelMapRow,
    MoveCode,
    Plan,
    PoolCode,
    ReasonCode,
    StayCode,
    UnphysicalCode,
    UnplacedCode,
)
from solver.rules import BrokenRuleCode
from solver.solve import answer_for
from solver.tables import TrinityVersion
from solver.trinity import check_trinity_config, load_config_mapping, read_trinity_config, trinity_config_problems

ROOT = Path(__file__).resolve().parent.parent
HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"


def documented_codes(heading: str) -> list[str]:
    """The codes of docs/json.md's table under `heading`: the first column's, in backquotes, in the table's order."""
    page = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    section = page.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z0-9-]+)` \|", section, flags=re.MULTILINE)


CODES: dict[str, type[Enum]] = {
    "Caution codes": CautionCode, "Reason codes": ReasonCode, "Unplaced codes": UnplacedCode, "Pool codes": PoolCode,
    "Move codes": MoveCode, "Stay codes": StayCode, "Beyond-calibration codes": BeyondCode,
    "Config problem codes": ConfigProblemCode,
    "Broken rule codes": BrokenRuleCode, "Unphysical codes": UnphysicalCode}
"""Each enum of codes, by the heading of docs/json.md's table of it."""


@pytest.mark.parametrize(("heading", "codes"), CODES.items())
def test_the_docs_document_every_code_once_and_no_other(heading: str, codes: type[Enum]):
    assert documented_codes(heading) == [code.value for code in codes]


def test_the_docs_document_every_explain_rule_once_and_no_other():
    page = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    section = page.split("## Explain rules\n", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE) == list(get_args(ExplainRule))


def test_explain_gives_every_rule_name_and_no_other():
    # mypy holds each name explain.py gives to ExplainRule; this holds ExplainRule to the names it gives.
    tree = ast.parse((ROOT / "solver" / "explain.py").read_text(encoding="utf-8"))
    values = [keyword.value for call in ast.walk(tree) if isinstance(call, ast.Call)
              and getattr(call.func, "id", None) == "Reason" for keyword in call.keywords if keyword.arg == "rule"]
    named = [node for value in values  # a name, or either name of `a if test else b`
             for node in ((value.body, value.orelse) if isinstance(value, ast.IfExp) else (value,))]
    assert all(isinstance(node, ast.Constant) for node in named), "a rule given otherwise than by its name"
    given = {node.value for node in named if isinstance(node, ast.Constant)}
    assert given == set(get_args(ExplainRule))


def test_codes_are_short_kebab_case():
    assert all(re.fullmatch(r"[a-z][a-z0-9]*(-[a-z0-9]+)*", code.value) for codes in CODES.values() for code in codes)


def codes_of(answers: tuple[solver.Answer, ...]) -> list[tuple[str | None, list[str]]]:
    """Each answer's reason code and its best plan's caution codes, as its JSON gives them."""
    shown = [answer.as_json() for answer in answers]
    return [(answer["reason_code"], answer["plans"][0]["caution_codes"] if answer["plans"] else []) for answer in shown]


def test_representative_plans_give_the_codes_of_their_cautions():
    mistral = solver.load_catalog().with_model(solver.load_model_config(ROOT / "docs/examples/my-model/config.json"))
    assert [codes_of(answers) for answers in (
        solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=8),
        solver.plan("llama-3.1-8b", gpu="h100", objective="max_len", budget_gpus=16),
        solver.plan("Mistral-7B-v0.1", gpu="h20", objective="max_len", budget_gpus=6, catalog=mistral),
        solver.plan("4B", gpu="a100", max_model_len=4096, budget_gpus=1),
        solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=6),
        solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=6, train_batch_size=96),
        solver.plan("8B", gpu="mi300x", max_model_len=32768, budget_gpus=8),
    )] == [
        [(None, ["past-validated-length", "thin-headroom"])],
        [(None, ["past-native-on-own-scaling", "thin-headroom"])],
        [(None, ["yarn-unvalidated-model", "thin-headroom"])],
        [(None, ["single-gpu-advised-against"])],
        [(None, ["uneven-data-parallel"])],
        [(None, [])],  # a batch its 3 data-parallel ranks divide: nothing to check
        [(None, ["rocm-env-may-not-apply"])],
    ]


def test_a_config_of_an_unchecked_kind_gives_its_code(tmp_path: Path):
    config = json.loads((HF_CONFIGS / "Mistral-Nemo-Base-2407.json").read_text(encoding="utf-8"))
    config.update({"_name_or_path": "my-model", "model_type": "exaone4"})
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    catalog = solver.load_catalog().with_model(solver.load_model_config(path))
    answers = solver.plan("my-model", gpu="h100", max_model_len=8192, budget_gpus=8, catalog=catalog)
    assert codes_of(answers) == [(None, ["unchecked-config-layout"])]
    estimate = solver.estimate_memory("my-model", "h100", 2, 8192, sp=1, env=True, catalog=catalog)
    assert (estimate.caution_codes, len(estimate.cautions)) == ((CautionCode.UNCHECKED_CONFIG_LAYOUT,), 1)


def test_representative_queries_without_a_plan_give_the_code_of_their_reason(tmp_path: Path):
    tiny = solver.load_catalog().with_gpu_types([solver.described_gpu_type("tiny", memory_gb=8)])
    cells = tmp_path / "mine.yaml"
    cells.write_text("gpu: Mine-80GB\nmemory_gb: 80\nsource: mine\ntables:\n"
                     "  - {gpus: 2, section: '2 x mine', models: [Qwen3-8B], rows: [\n"
                     "      {max_model_len: 4096, cells: {Qwen3-8B: '-'}}]}\n", encoding="utf-8")
    mine = solver.load_catalog().with_cells(cells)
    assert [codes_of(answers) for answers in (
        solver.plan("32B", gpu="a100", max_model_len=4096, budget_gpus=8, estimate="never"),
        solver.plan("llama-3.1-70b", gpu="tiny", max_model_len=4096, budget_gpus=1, estimate="only", catalog=tiny),
        solver.plan("14B", gpu="a100", max_model_len=4096, budget_gpus=10, exact=True, estimate="never"),
        solver.plan("8B", gpu="Mine-80GB", max_model_len=4096, budget_gpus=1, catalog=mine),
        solver.plan("4B", gpu="a100", max_model_len=32768, budget_gpus=1, rollout_gpus=8),
        solver.plan("14B", gpu="a100", max_model_len=32768, budget_gpus=2, sp=1, estimate="never"),
        solver.plan("14B", gpu="a100", max_model_len=4096, budget_gpus=2, sp=1, env=False, offload=False,
                    estimate="never"),
    )] == [
        [("no-table-for-model", [])],
        [("estimate-fits-nothing", [])],
        [("exact-count-has-no-plan", [])],
        [("budget-below-smallest-count", [])],
        [("rollout-leaves-no-layout", [])],
        [("length-beyond-reach", [])],
        [("nothing-trains", [])],
    ]


def test_representative_estimates_give_a_code_for_each_way_they_lie_beyond_the_calibration(tmp_path: Path):
    small = json.loads((HF_CONFIGS / "Llama-3.2-1B.json").read_text(encoding="utf-8"))
    small.update({"_name_or_path": "tiny-llama", "num_hidden_layers": 2})  # 0.3B: fewer than the smallest fitted
    (tmp_path / "config.json").write_text(json.dumps(small), encoding="utf-8")
    catalog = (solver.load_catalog().with_model(solver.load_model_config(HF_CONFIGS / "gemma-2-9b.json"))
               .with_model(solver.load_model_config(tmp_path / "config.json")))

    def codes(model: str, gpu: str, gpus: int, length: int, sp: int) -> list[str]:
        estimate = solver.estimate_memory(model, gpu, gpus, length, sp=sp, env=True, catalog=catalog)
        assert len(estimate.beyond_calibration_codes) == len(estimate.beyond_calibration)
        return [code.value for code in estimate.beyond_calibration_codes]

    assert codes("30B-A3B", "h100", 8, 32768, 8) == ["larger-model", "mixture-of-experts", "more-gpus", "larger-sp"]
    assert codes("0.6B", "h200", 2, 262144, 1) == ["other-gpu-memory", "more-tokens-per-gpu"]
    assert codes("gemma-2-9b", "h100", 4, 8192, 1) == ["other-vocabulary", "capped-logits"]
    assert codes("tiny-llama", "h100", 2, 8192, 1) == ["smaller-model", "other-vocabulary"]
    # A plan's, as solve --json gives it.
    (h100,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=8)
    assert h100.as_json()["plans"][0]["beyond_calibration_codes"] == ["more-gpus", "larger-sp"]


def test_an_answer_worked_out_without_its_reason_says_so_by_its_code():
    catalog = solver.load_catalog()
    query = make_query(catalog, model="14B", gpu="a100", max_model_len=4096, budget_gpus=2, estimate="never", sp=1,
                       env=False, offload=False)
    answer = answer_for(catalog, query, "A100-80GB", explained=False)
    assert (answer.reason, answer.reason_code) == ("no plan", ReasonCode.NOT_EXPLAINED)


def test_a_plan_refuses_codes_that_do_not_match_its_cautions():
    (answer,) = solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=6)
    best = answer.plans[0].model_dump()
    with pytest.raises(ValidationError, match="2 caution_codes for 1 cautions"):
        Plan(**{**best, "caution_codes": ("uneven-data-parallel", "thin-headroom")})
    with pytest.raises(ValidationError, match="1 beyond_calibration_codes for 0 beyond_calibration phrases"):
        Plan(**{**best, "beyond_calibration_codes": ("more-gpus",)})
    # Fewer codes than cautions too: a plan with two (past-validated-length, thin-headroom) given one.
    (longest,) = solver.plan("8B", gpu="h100", objective="max_len", budget_gpus=8)
    with pytest.raises(ValidationError, match="1 caution_codes for 2 cautions"):
        Plan(**{**longest.plans[0].model_dump(), "caution_codes": ("past-validated-length",)})
    # JSON made before codes has none: it rebuilds as it was.
    assert Plan(**{**best, "caution_codes": ()}).cautions == answer.plans[0].cautions
    estimate = solver.estimate_memory("8B", "a100", 6, 32768, sp=2, env=True).model_dump()
    with pytest.raises(ValidationError, match="0 cautions"):
        MemoryEstimate(**{**estimate, "cautions": (), "caution_codes": ("thin-headroom",)})


def test_memory_estimates_give_the_codes_of_their_cautions():
    # As `solve memory --json` gives them: each estimate's codes, in the order of its cautions.
    assert [[code.value for code in solver.estimate_memory(*asked, **flags).caution_codes] for asked, flags in (
        # 0.4 GiB to spare, extrapolated, at the 24 GiB card's default margin 0.06 (1.48 at 0.01, less 0.05 x 22.27);
        # Offload's host need past a workstation's 64 GiB (a GeForce card); SP over its PCIe
        (("8B", "rtx-4090", 8, 48128), {"sp": 8, "env": True, "offload": True}),
        (("4B", "a100", 1, 4096), {"sp": 1, "env": False}),
        (("8B", "mi300x", 6, 32768), {"sp": 2, "env": True}),
        (("8B", "a100", 8, 32768), {"sp": 2, "env": True}),
    )] == [["thin-headroom", "host-memory-unchecked", "sp-over-pcie"], ["single-gpu-advised-against"],
           ["uneven-data-parallel", "rocm-env-may-not-apply"], []]


@pytest.mark.parametrize("command", list(JSON_SCHEMA_TYPES))
def test_the_schema_files_are_what_the_code_gives(command: str):
    path = ROOT / "docs" / "schema" / f"{command}.json"
    written, given = json.loads(path.read_text(encoding="utf-8")), json.loads(json_schema(command))
    # Compared as data: pydantic 2.6 (the lowest pyproject allows) writes a bound 0 as 0.0 (equal as numbers), wraps a
    # described reference in a one-item allOf, and gives a constant no type: the same schema.
    assert _as_pydantic_writes_now(written) == _as_pydantic_writes_now(given), "run python tests/shown_output.py"


@pytest.mark.parametrize("command", list(JSON_SCHEMA_TYPES))
def test_a_schema_starts_with_its_draft_and_the_command_as_its_title(command: str):
    # Read from the top, a schema file says first which draft it is and which command's --json it describes.
    schema = json.loads(json_schema(command))
    assert list(schema)[:2] == ["$schema", "title"] and schema["title"] == (
        "solve --json" if command == "solve" else f"solve {command} --json" if "-" not in command
        else "solve cluster --buy --json")


def _keys_named_in_json_page() -> set[str]:
    """The key names docs/json.md gives in backquotes (fenced blocks left out): a key alone (`states_grouped`), a
    dotted path of keys (`current.predicted_critic_pass`, `fit.range`), a row's keys (`{"model", "plans"}`) or an
    object's (`{"job": ..., "pool": ...}`)."""
    page = re.sub(r"^```.*?^```$", "", (ROOT / "docs" / "json.md").read_text(encoding="utf-8"),
                  flags=re.DOTALL | re.MULTILINE)
    spans = re.findall(r"`([^`]*)`", page)
    paths = {name for span in spans if re.fullmatch(r'[\w.\[\]]+|\{"\w+"(, "\w+")*\}', span)
             for name in re.findall(r"\w+", span)}
    return paths | {name for span in spans if span.startswith("{") for name in re.findall(r'"(\w+)":', span)}


def test_json_md_names_every_key_the_commands_print():
    # Every property of every object of the six schemas (docs/schema/, which the test above keeps the code's), and
    # every key of solve tables --json's cells, is named in docs/json.md, so that its reference leaves none out.
    named = _keys_named_in_json_page()
    unnamed = []
    for command in JSON_SCHEMA_TYPES:
        schema = json.loads((ROOT / "docs" / "schema" / f"{command}.json").read_text(encoding="utf-8"))
        for name, definition in [(command, schema), *schema["$defs"].items()]:
            unnamed += [f"{name}.{key}" for key in definition.get("properties", {}) if key not in named]
    cell = next(iter(solver.load_catalog().cells()))
    unnamed += [f"solve tables cell.{key}" for key in cell_record(cell) if key not in named]
    assert sorted(set(unnamed)) == []


def _as_pydantic_writes_now(schema: Any) -> Any:
    """`schema` with each ``{"allOf": [{"$ref": R}], ...}`` written as ``{"$ref": R, ...}``, each text, true/false or
    whole-number ``{"const": C}`` given its ``"type"`` (``"string"``, ``"boolean"``, ``"integer"``), each object of
    any keys (``dict[str, Any]``) given its ``"additionalProperties": true``, which pydantic 2.6 leaves out (JSON
    Schema's default: the same schema), and an enum of one member (``StayCode``), which pydantic 2.6 writes as its
    ``"const"``, as ``{"enum": [C]}``."""
    if isinstance(schema, list):
        return [_as_pydantic_writes_now(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    unwrapped = {key: _as_pydantic_writes_now(value) for key, value in schema.items()}
    if [set(item) for item in unwrapped.get("allOf", ())] == [{"$ref"}]:
        unwrapped |= unwrapped.pop("allOf")[0]
    if isinstance(const := unwrapped.get("const"), (str, bool, int)):
        unwrapped.setdefault("type", "boolean" if isinstance(const, bool) else "integer" if isinstance(const, int)
                             else "string")
    if "const" in unwrapped and "enum" not in unwrapped and "title" in unwrapped:  # a one-member Enum class
        unwrapped["enum"] = [unwrapped.pop("const")]
    if unwrapped.get("type") == "object" and not {"properties", "$ref"} & set(unwrapped):
        unwrapped.setdefault("additionalProperties", True)
    return unwrapped


@functools.cache
def _checked_validator(command: str) -> Draft202012Validator:
    """A validator of docs/schema/COMMAND.json, the schema checked against the metaschema first (once a run: the
    check takes a third of a second)."""
    schema = json.loads((ROOT / "docs" / "schema" / f"{command}.json").read_text(encoding="utf-8"))
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def jsonschema_errors(command: str, printed: Any) -> list[str]:
    """Where the `jsonschema` package finds that what `solve` (`command`) printed breaks docs/schema/COMMAND.json:
    ``PATH: message`` each, sorted."""
    return sorted(f"${''.join(f'[{key!r}]' for key in error.absolute_path)}: {error.message}"
                  for error in _checked_validator(command).iter_errors(printed))


def test_the_schema_check_finds_what_breaks_it():
    [answer] = [a.as_json() for a in solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=6)]
    answer["plans"][0]["caution_codes"] = ["no-such-code"]
    answer["plans"][0]["gpus"] = "6"
    answer["extra"] = 1
    del answer["status"]
    assert jsonschema_errors("solve", [answer]) == [
        "$[0]: 'status' is a required property", "$[0]: Additional properties are not allowed ('extra' was unexpected)",
        f"$[0]['plans'][0]['caution_codes'][0]: 'no-such-code' is not one of {[code.value for code in CautionCode]}",
        "$[0]['plans'][0]['gpus']: '6' is not of type 'integer'"]


def test_the_schema_check_finds_keys_left_out_nulls_and_tuples_of_another_length():
    # Keys that are always printed are required (defaults too), the answer's keys printed only when present are never
    # null, and a pair is two numbers.
    [answer] = [a.as_json() for a in solver.plan("8B", gpu="a100", max_model_len=32768, budget_gpus=6)]
    del answer["plans"][0]["caution_codes"], answer["open_budget"], answer["reason_code"]
    answer["nearest"] = None
    answer["current"] = {**CURRENT_SETTINGS, "predicted": [70.0, 71.3, 2.0]}
    assert jsonschema_errors("solve", [answer]) == [
        "$[0]: 'open_budget' is a required property", "$[0]: 'reason_code' is a required property",
        "$[0]['current']['predicted']: [70.0, 71.3, 2.0] is not valid under any of the given schemas",
        "$[0]['nearest']: None is not of type 'object'", "$[0]['plans'][0]: 'caution_codes' is a required property"]
    placed = solver.place(ROOT / "docs" / "examples" / "fleet.yaml").model_dump(mode="json")
    del placed["tie_broken"], placed["placements"][0]["widened_from"]
    assert jsonschema_errors("cluster", placed) == [
        "$: 'tie_broken' is a required property", "$['placements'][0]: 'widened_from' is a required property"]


CURRENT_SETTINGS = {"config": "trinity.yaml", "config_model": None,
                    "gpus": 8, "gpus_given": True, "nodes_given": False, "batch_given": False, "env": False,
                    "offload": False, "sp": 1,
                    "critic_sps": [],
                    "max_model_len": 32768, "length_given": True, "max_token_len_per_gpu": None, "trains": False,
                    "plan": None, "unread_keys": [], "broken_rule": None, "host_memory_needed": None,
                    "predicted": [90.1, 71.3],
                    "predicted_step": None, "predicted_critic_pass": None, "out_of_memory": None, "smaller_card": None,
                    "config_problems": [], "broken_rule_code": None, "states_grouped": False,
                    "config_problem_codes": [], "refused": False, "env_variable": "PYTORCH_CUDA_ALLOC_CONF",
                    "env_variable_set": False,
                    "verdict": ("trinity.yaml runs vanilla on 8 trainer GPUs at 32768 tokens (Env off, "
                                "PYTORCH_CUDA_ALLOC_CONF unset in this shell): nothing in the tables and the memory "
                                "model's estimates says it trains (the memory model predicts 90.1 GiB per GPU, of 71.3 "
                                "usable). The best plan follows.")}
"""A config's settings as ``solve --from-config --json`` prints them, where they do not fit by the memory model."""


def test_the_schema_leaves_out_only_what_the_json_leaves_out():
    # Every key of every object is required but the answer's keys printed only when present, and a source cell's
    # other GPU type and table source (printed only where there is one), and a config key change's `removed`.
    optional = {("solve", "Answer"): set(ANSWER_LEFT_OUT_WHEN_NONE), ("map", "GpuMap"): set(MAP_LEFT_OUT_WHEN_NONE),
                **{(command, "Unplaced"): set(UNPLACED_LEFT_OUT_WHEN_NONE) for command in ("cluster", "cluster-buy")},
                **{(command, "Placement"): set(PLACEMENT_LEFT_OUT_WHEN_NONE) for command in ("cluster", "cluster-buy")},
                **{(command, "RolloutEngines"): set(ROLLOUT_ENGINES_LEFT_OUT_WHEN_NONE)
                   for command in ("cluster", "cluster-buy")},
                **{(command, "SourceCell"): {"gpu", "table_source"} for command in JSON_SCHEMA_TYPES},
                **{(command, "Plan"): set(PLAN_LEFT_OUT_WHEN_NONE) for command in JSON_SCHEMA_TYPES},  # gpu_hours
                ("solve", "ConfigKeyChange"): set(ConfigKeyChange.left_out_where_none)}  # "removed" (review81a, s81)
    for command in JSON_SCHEMA_TYPES:
        schema = json.loads(json_schema(command))
        for name, type_schema in [("", schema), *schema["$defs"].items()]:
            if "properties" in type_schema:
                assert set(type_schema["properties"]) - set(type_schema["required"]) == optional.get(
                    (command, name), set()), (command, name)


@pytest.mark.parametrize("flags", [
    ("--maximize", "len", "--gpus", "8", "--model", "8B", "--gpu", "h100", "--top", "3"),
    ("--model", "14B", "--gpus", "2", "--len", "131072", "--gpu", "a100", "--explain"),
    ("--model", "8B", "--gpus", "6", "--len", "32768", "--train-batch-size", "256"),
    ("--model", "8B", "--gpus", "8", "--len", "32768", "--gpu", "a100", "--rollout-gpus", "4"),
    ("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "65536", "--estimate"),
    ("--from-config", "docs/examples/trinity.yaml", "--gpu", "h20"),
    ("--model-config", "tests/data/hf-configs/Mixtral-8x7B-v0.1.json", "--gpu", "h100", "--maximize", "len", "--gpus",
     "8", "--host-ram", "512", "--top", "2"),
    ("--model", "32B", "--gpu", "a10", "--gpus", "2", "--len", "32k", "--no-estimate", "--explain"),
    ("--model", "30B-A3B", "--gpu", "l40s", "--minimize", "gpus", "--len", "64k", "--explain"),
    ("--model", "8B", "--gpu", "a100", "--gpus", "8", "--len", "32k", "--minimize", "gpu-hours", "--top", "2"),
])
def test_real_solve_json_is_valid_against_its_schema(cli, monkeypatch, flags: tuple[str, ...]):
    monkeypatch.chdir(ROOT)
    status, out, _ = cli(*flags, "--json")
    printed = json.loads(out)
    assert status in (0, 1) and jsonschema_errors("solve", printed) == []


def test_json_that_names_a_memory_model_of_ones_own_is_valid_against_its_schema(monkeypatch):
    monkeypatch.chdir(ROOT)
    own = solver.load_memory_model().model_copy(update={"source": "calibrated on mine.yaml"})
    (gpu_map,) = solver.map_plans("8B", gpu="h100", gpus_up_to=2, memory=own)
    placed = solver.place("docs/examples/fleet.yaml", memory=own)
    assert (gpu_map.memory_model_source, placed.memory_model_source) == ("calibrated on mine.yaml",) * 2
    assert jsonschema_errors("map", [gpu_map.model_dump(mode="json")]) == []
    assert jsonschema_errors("cluster", placed.model_dump(mode="json")) == []


def test_real_cluster_json_is_valid_against_its_schema(cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    status, out, _ = cli("cluster", "docs/examples/fleet.yaml", "--json")
    placed = json.loads(out)
    assert status in (0, 1) and placed["placements"]
    assert jsonschema_errors("cluster", placed) == []


def test_real_cluster_json_with_jobs_left_out_is_valid_against_its_schema(cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools: [{name: a, gpu: A100-80GB, nodes: 1, gpus_per_node: 8, host_ram_gb: 512}]\n"
                     "jobs:\n- {name: big, model: Qwen3-32B, max_model_len: 65536, rollout_gpus: 4}\n"
                     "- {name: long, model: Qwen3-14B, max_model_len: 1048576}\n"
                     "- {name: small, model: Qwen3-4B, max_model_len: {at_least: 8192}, rollout_gpus: 2}\n",
                     encoding="utf-8")
    for flags in ((), ("--minimize", "nodes")):
        status, out, _ = cli("cluster", str(fleet), *flags, "--json")
        placed = json.loads(out)
        assert status == 1 and placed["unplaced"]
        assert jsonschema_errors("cluster", placed) == []


def test_real_cluster_json_with_smaller_asks_is_valid_against_its_schema(cli, monkeypatch):
    # docs/examples/smaller-asks.yaml: the job left out is told both smaller asks; each is a FitsWith of the schema
    # (one without its pool is refused).
    monkeypatch.chdir(ROOT)
    status, out, _ = cli("cluster", "docs/examples/smaller-asks.yaml", "--json")
    placed = json.loads(out)
    [unplaced] = placed["unplaced"]
    assert (status, [(fits["rollout_gpus"], fits["max_model_len"]) for fits in unplaced["fits_with"]]) == (
        1, [(0, 51200), (1, 28672)])
    assert jsonschema_errors("cluster", placed) == []
    del unplaced["fits_with"][1]["pool"]
    assert jsonschema_errors("cluster", placed) == ["$['unplaced'][0]['fits_with'][1]: 'pool' is a required property"]

MEMORY_CASES = [  # (flags, exit status)
    (("--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32768", "--sp", "2", "--env"), 0),  # tables, refuted
    (("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "131072", "--sp", "8", "--env", "--offload",
      "--host-ram", "64"), 1),  # Offload's states past the host memory
    (("--model", "32B", "--gpu", "a10", "--gpus", "2", "--len", "32k"), 1),  # no length fits: longest_len null
    (("--model", "14B", "--gpu", "l40s", "--gpus", "4", "--len", "64k", "--sp", "4", "--env", "--token-budget", "20k",
      "--margin", "1e-05", "--node-gpus", "4"), 1),
    (("--model-config", "tests/data/hf-configs/Mixtral-8x7B-v0.1.json", "--gpu", "h100", "--gpus", "8", "--len", "8k",
      "--env", "--offload", "--host-ram", "2TB"), 0),  # beyond the calibration, cautioned
    (("--cells", "tests/data/cells/h800.yaml", "--model", "8B", "--gpu", "h800", "--gpus", "8", "--len", "32k"),
     1),  # measured cells of yours: the table's source (table_source)
    (("--model", "4B", "--gpu", "mygpu", "--gpu-memory", "64", "--gpus", "2", "--len", "8k", "--env"), 0),
    (("--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "8k", "--offload"), 0),  # one GPU, cautioned
]


@pytest.mark.parametrize(("flags", "status"), MEMORY_CASES)
def test_real_memory_json_is_valid_against_its_schema(cli, monkeypatch, flags: tuple[str, ...], status: int):
    monkeypatch.chdir(ROOT)
    printed_status, out, _ = cli("memory", *flags, "--json")
    printed = json.loads(out)
    schema = json.loads(json_schema("memory"))
    # Every key, in the schema's order: the type's fields, then its verdicts.
    assert (printed_status, list(printed), jsonschema_errors("memory", printed)) == (
        status, list(schema["properties"]), [])


@pytest.mark.parametrize(("flags", "status"), MEMORY_CASES)
def test_real_memory_json_reads_back_into_its_type(cli, monkeypatch, flags: tuple[str, ...], status: int):
    # As an Answer reads `solve --json` back: the verdicts are derived again, and agree with those printed, so the
    # answer rebuilt prints the same JSON, the headroom too (printed from the rounded GiB since s81, persona63, not
    # 0.0001 off). Its verdict is the exit status's.
    monkeypatch.chdir(ROOT)
    _, out, _ = cli("memory", *flags, "--json")
    printed, rebuilt = json.loads(out), MemoryAnswer.model_validate_json(out)
    again = rebuilt.model_dump(mode="json")
    assert again == printed and list(again) == list(printed) and rebuilt.trains == (status == 0)


def test_the_api_gives_the_memory_answer_solve_memory_json_prints(cli):
    # docs/api.md: estimate_memory's estimate, with the question the command echoes, is the MemoryAnswer it prints;
    # the new result types are exported from solver.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "128k", "--sp", "8",
                             "--env", "--host-ram", "64", "--json")[1])
    estimate = solver.estimate_memory("8B", "h100", 8, 131072, sp=8, env=True, host_ram_gb=64)
    question = {name: printed[name] for name in MemoryQuestion.model_fields}
    assert solver.MemoryAnswer(**question, **dict(estimate)).model_dump(mode="json") == printed
    assert (solver.MemoryAnswer, solver.GpuMap, solver.ModelMapRow, solver.LengthMapRow) == (
        MemoryAnswer, GpuMap, ModelMapRow, LengthMapRow)


def test_memory_json_whose_verdicts_the_other_fields_contradict_is_refused(cli):
    printed = json.loads(cli("memory", "--model", "32B", "--gpu", "a10", "--gpus", "2", "--len", "32k", "--json")[1])
    for verdict in VERDICTS:
        given = ("documented" if verdict == "evidence" else printed[verdict] + 3 * JSON_GIB_SLACK
                 if verdict == "headroom_gib" else not printed[verdict])
        with pytest.raises(ValidationError, match=f"{verdict} is {given!r}, but the other fields say"):
            MemoryAnswer.model_validate({**printed, verdict: given})
    within_rounding = {**printed, "headroom_gib": printed["headroom_gib"] + JSON_GIB_SLACK}
    assert MemoryAnswer.model_validate(within_rounding).fits is False


def test_memory_json_whose_rounding_turns_a_verdict_reads_back_with_the_rounded_figures_verdict(cli):
    # A peak 0.03 MiB over what it may take (with Offload: no optimizer step on the GPU): it does not fit, but both
    # round to 70.1235 GiB, which fits, and the answer rebuilt from the JSON says so (docs/api.md): read, not refused.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "8k", "--offload",
                             "--json")[1])
    answer = MemoryAnswer.model_validate(printed).model_copy(update={"usable_gib": 70.12346, "total_gib": 70.12349})
    as_json = answer.model_dump(mode="json")
    assert (as_json["total_gib"], as_json["usable_gib"], as_json["fits"], as_json["trains"]) == (
        70.1235, 70.1235, False, False)
    rebuilt = MemoryAnswer.model_validate(as_json)
    assert (rebuilt.fits, rebuilt.trains, rebuilt.headroom_gib) == (True, True, 0)
    # Only the verdicts that rest on that comparison may go either way: with Offload the optimizer step always
    # fits, and without --host-ram the host memory does.
    for verdict in ("step_fits", "host_fits"):
        with pytest.raises(ValidationError, match=f"{verdict} is False, but the other fields say True"):
            MemoryAnswer.model_validate({**as_json, verdict: False})


def test_memory_json_whose_rounding_turns_the_host_verdict_reads_back(cli):
    # A host memory need of 100.00003 GiB is shown as 100.1 (rounded up to a tenth), more than a --host-ram of
    # 100.05: host_fits is false. The JSON prints the need as 100.0, which 100.05 holds: read back with the rounded
    # figures' verdict, not refused. A need far from the node's memory still may not contradict it.
    printed = json.loads(cli("memory", "--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "8k", "--offload",
                             "--host-ram", "512", "--json")[1])
    answer = MemoryAnswer.model_validate(printed).model_copy(update={"host_memory_gib": 100.00003,
                                                                     "host_ram_gib": 100.05})
    as_json = answer.model_dump(mode="json")
    assert (as_json["host_memory_gib"], as_json["host_fits"], as_json["trains"]) == (100.0, False, False)
    rebuilt = MemoryAnswer.model_validate(as_json)
    assert (rebuilt.host_fits, rebuilt.trains) == (True, True)
    with pytest.raises(ValidationError, match="host_fits is False, but the other fields say True"):
        MemoryAnswer.model_validate({**printed, "host_fits": False})
    # The GPU's peak, far from its limit, may not contradict its verdict.
    with pytest.raises(ValidationError, match="error, fits is False, but the other fields say True"):
        MemoryAnswer.model_validate({**as_json, "fits": False})


def test_memory_json_echoes_the_question_as_asked_and_rounds_the_estimates_gib(cli):
    # The question's fields are not GiB: a --margin of 0.123456 is echoed whole, while the estimate's GiB (and its
    # terms') are rounded to 4 decimals.
    status, out, _ = cli("memory", "--model", "4B", "--gpu", "a100", "--gpus", "4", "--len", "8192", "--margin",
                         "0.123456", "--json")
    printed = json.loads(out)
    assert status == 0 and printed["margin"] == 0.123456 and printed["model_parameters_b"] == 4.022
    figures = [printed["total_gib"], printed["usable_gib"], *printed["terms"].values()]
    assert all(round(figure, 4) == figure for figure in figures)
    assert any(round(figure, 3) != figure for figure in figures)


MAP_CASES = [
    ("--gpu", "h100", "--model", "8B,32B,30B-A3B", "--gpus-up-to", "3", "--host-ram", "512"),
    ("--gpu", "a10", "--model", "32B,4B", "--gpus-up-to", "2", "--host-ram", "100.5", "--node-gpus", "4"),  # nulls
    ("--gpu", "h20", "--model", "8B", "--by", "len", "--gpus-up-to", "4", "--train-batch-size", "96",
     "--token-budget", "auto"),
    ("--gpu", "h800", "--cells", "tests/data/cells/h800.yaml", "--model", "8B", "--by", "len", "--gpus-up-to", "2",
     "--estimate"),
    ("--model-config", "tests/data/hf-configs/Llama-3.2-1B.json", "--gpus-up-to", "1", "--no-estimate"),
]


@pytest.mark.parametrize("flags", MAP_CASES)
def test_real_map_json_is_valid_against_its_schema(cli, monkeypatch, flags: tuple[str, ...]):
    monkeypatch.chdir(ROOT)
    status, out, _ = cli("map", *flags, "--json")
    printed = json.loads(out)
    assert status == 0 and jsonschema_errors("map", printed) == []


@pytest.mark.parametrize("flags", MAP_CASES)
def test_real_map_json_reads_back_into_its_type(cli, monkeypatch, flags: tuple[str, ...]):
    # Each map's rows come back as the type its `by` names, and print the same JSON.
    monkeypatch.chdir(ROOT)
    _, out, _ = cli("map", *flags, "--json")
    rebuilt = TypeAdapter(list[GpuMap]).validate_json(out)
    row_types = {type(row) for gpu_map in rebuilt for row in gpu_map.rows}
    assert row_types == ({LengthMapRow} if "len" in flags else {ModelMapRow})
    assert json.dumps([gpu_map.model_dump(mode="json") for gpu_map in rebuilt], indent=2) + "\n" == out


def test_a_map_by_length_without_its_model_or_with_rows_of_models_is_refused(cli):
    [by_length] = json.loads(cli("map", "--gpu", "h100", "--model", "8B", "--by", "len", "--gpus-up-to", "1",
                                 "--json")[1])
    [by_model] = json.loads(cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "1", "--json")[1])
    without_model = {name: value for name, value in by_length.items() if name != "model"}
    model_rows = {**by_length, "rows": by_model["rows"]}
    assert jsonschema_errors("map", [by_length, by_model]) == []
    assert jsonschema_errors("map", [without_model]) == ["$[0]: 'model' is a required property"]
    assert jsonschema_errors("map", [{**by_model, "model": "Qwen3-8B"}]) == [
        "$[0]['model']: 'Qwen3-8B' is not of type 'null'"]
    assert jsonschema_errors("map", [model_rows]) == [
        "$[0]['rows'][0]: 'max_model_len' is a required property",
        "$[0]['rows'][0]: Additional properties are not allowed ('model' was unexpected)"]
    for refused, words in [(without_model, "a map by 'len' needs model"),
                           ({**by_model, "model": "Qwen3-8B"}, "a map by 'model' takes no model"),
                           (model_rows, "a map by 'len' has rows of LengthMapRow")]:
        with pytest.raises(ValidationError, match=words):
            GpuMap.model_validate(refused)


def test_the_schema_check_finds_what_breaks_the_memory_and_map_schemas(cli, monkeypatch):
    monkeypatch.chdir(ROOT)
    estimate = json.loads(cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "6", "--len", "32k", "--json")[1])
    del estimate["trains"]
    estimate["terms"]["logits"] = None
    estimate["host_ram_gib"] = "512"
    assert jsonschema_errors("memory", {**estimate, "extra": 1}) == [
        "$: 'trains' is a required property", "$: Additional properties are not allowed ('extra' was unexpected)",
        "$['host_ram_gib']: '512' is not valid under any of the given schemas",
        "$['terms']['logits']: None is not of type 'number'"]
    [h100] = json.loads(cli("map", "--gpu", "h100", "--model", "8B", "--gpus-up-to", "1", "--json")[1])
    h100["rows"][0]["max_model_len"] = 4096  # a row by length in a map by model
    h100["host_ram_gb"] = None  # left out, never null
    h100["estimate"] = "auto"  # the default is left out
    estimate_problem, host_ram_problem, rows_problem, row_problem = jsonschema_errors("map", [h100])
    assert (estimate_problem, host_ram_problem, row_problem) == (
        "$[0]['estimate']: 'auto' is not one of ['only', 'never']", "$[0]['host_ram_gb']: None is not of type 'number'",
        "$[0]['rows'][0]: Additional properties are not allowed ('max_model_len' was unexpected)")
    assert rows_problem.startswith("$[0]['rows']: [{'model': 'Qwen3-8B', ")
    assert rows_problem.endswith("'max_model_len': 4096}] is not valid under any of the given schemas")


def test_an_answer_the_time_limit_left_open_gives_its_code(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(cp_model.CpSolver, "solve", lambda self, model, callback=None: cp_model.UNKNOWN)
    (answer,) = solver.plan("4B", gpu="a100-80g", max_model_len=8192, time_limit_s=2)
    assert (answer.status, answer.reason, answer.reason_code) == (
        "unknown", "no plan found within the time limit of 2 s", ReasonCode.TIME_LIMIT)


def test_a_length_without_a_plan_whose_shorter_ones_were_left_open_gives_its_code(monkeypatch: pytest.MonkeyPatch):
    # The asked length has no plan; the question of the longest that trains runs out of time.
    answered = solver.solve.answer_for

    def longest_left_open(catalog: solver.Catalog, query: Query, gpu: str, *args: Any, **kwargs: Any) -> solver.Answer:
        answer = answered(catalog, query, gpu, *args, **kwargs)
        return answer.model_copy(update={"status": "unknown", "plans": ()}) if query.objective == "max_len" else answer

    monkeypatch.setattr(solver.solve, "answer_for", longest_left_open)
    (answer,) = solver.plan("14B", gpu="a100-80g", max_model_len=1 << 20, budget_gpus=8)
    assert (answer.reason, answer.reason_code) == (
        ("1048576 tokens has no plan in the tables and the memory model's estimates for Qwen3-14B on A100-80GB within "
         "8 GPUs; whether a shorter length has one was not decided within the time limit of 10 s"),
        ReasonCode.SHORTER_LENGTH_UNDECIDED)


C = ConfigProblemCode
ACTOR_FLAG = "trainer: {trainer_config: {actor_rollout_ref: {actor: {use_dynamic_bsz: %s}}}}"
ACTOR_SP_TYPO = "trainer: {trainer_config: {actor_rollout_ref: {actor: {ulysses_sequence_paralel_size: 2}}}}"
CHECKED: list[tuple[str, str, int, TrinityVersion | None, list[ConfigProblemCode]]] = [
    # (config, model, trainer GPUs, Trinity version, the codes of its problems)
    ("model: {max_model_len: '${oc.env:LEN}'}", "8B", 8, None, [C.UNRESOLVED_VALUE]),
    ("model: {critic_model_path: '${model.nope}'}", "8B", 8, None, [C.UNRESOLVED_VALUE_REFUSED]),
    ("model: {critic_model_path: [a, b]}", "8B", 8, None, [C.WRONG_TYPE_REFUSED]),
    (("explorer: {rollout_model: {rope_scaling: {rope_type: yarn, factor: 2.0, "
      "original_max_position_embeddings: 40960}}}"), "8B", 8, None, [C.ROLLOUT_ROPE_SCALING_DIFFERS]),
    ("model: {max_model_len: 4096}\nexplorer: {rollout_model: {max_model_len: 2048}}", "8B", 8, None,
     [C.ROLLOUT_LENGTH_SHORT]),
    ("model: {max_model_len: 32768}\nexplorer: {rollout_model: {max_model_len: 65536}}", "8B", 8, None,
     [C.ROLLOUT_LENGTH_REFUSED]),
    ("trainer: {trainer_config: {actor_rollout_ref: {actor: {entropy_checkpointing: [8]}}}}", "8B", 8, None,
     [C.WRONG_TYPE]),
    (("model: {max_model_len: 65536, rope_scaling: {rope_type: yarn, factor: '${oc.env:F,1.6}', "
      "original_max_position_embeddings: 40960, rope_theta: 1000000}}"), "8B", 8, None, [C.NUMBER_AS_TEXT]),
    # OmegaConf's int field in Trinity's typed config refuses text and a float (s67)
    ("trainer: {max_token_len_per_gpu: lots, ulysses_sequence_parallel_size: .inf}", "8B", 8, None,
     [C.WRONG_TYPE_REFUSED, C.WRONG_TYPE_REFUSED]),
    ("trainer: {trainer_config: {critic: {ppo_max_token_len_per_gpu: lots}}}", "8B", 8, None, [C.NOT_A_NUMBER]),
    ("model: {max_prompt_tokens: -1}\ntrainer: {ulysses_sequence_parallel_size: 0}\ncluster: {gpu_per_node: 0}",
     "8B", 8, None, [C.VALUE_OUT_OF_RANGE] * 3),
    # Every release refuses a wrong flag or key under trainer itself (its typed Config); under trainer_config, 0.5 does
    # (its typed veRLConfig), 0.6 on verl before 0.8 does not (build_dataclass_from_mapping).
    ("trainer: {use_dynamic_bsz: maybe}", "8B", 8, None, [C.FLAG_NOT_BOOLEAN_REFUSED]),
    ("trainer: {use_dynamic_bsz: maybe}", "8B", 8, "0.6", [C.FLAG_NOT_BOOLEAN_REFUSED]),
    (ACTOR_FLAG % "maybe", "8B", 8, None, [C.FLAG_NOT_BOOLEAN]),
    (ACTOR_FLAG % "maybe", "8B", 8, "0.6", [C.FLAG_NOT_BOOLEAN]),
    (ACTOR_FLAG % "maybe", "8B", 8, "0.5", [C.FLAG_NOT_BOOLEAN_REFUSED]),
    ("trainer: {ulysses_sequence_paralel_size: 2}", "8B", 8, None, [C.MISSPELT_KEY_REFUSED]),
    ("trainr: {ulysses_sequence_parallel_size: 2}", "8B", 8, "0.6", [C.MISSPELT_KEY_REFUSED]),
    (ACTOR_SP_TYPO, "8B", 8, None, [C.MISSPELT_KEY]),
    (ACTOR_SP_TYPO, "8B", 8, "0.6", [C.MISSPELT_KEY]),
    (ACTOR_SP_TYPO, "8B", 8, "0.5", [C.MISSPELT_KEY_REFUSED]),
    ("trainer: {ulysses_sequence_parallel_size: 4}", "8B", 6, None, [C.SP_DIVIDES_GPUS]),
    ("trainer: {ulysses_sequence_parallel_size: 3}", "8B", 6, None, [C.SP_MODEL_HEADS]),
    ("cluster: {gpu_per_node: 4}", "8B", 6, None, [C.WHOLE_NODES]),
    # The raise, then Trinity 0.5.1's padded width (a line of its own).
    ("model: {max_model_len: 32768}\ntrainer: {max_token_len_per_gpu: 1000}", "8B", 8, None,
     [C.TOKEN_BUDGET_BELOW_LENGTH] * 2),
    ("model: {max_model_len: 32768, max_prompt_tokens: 30000, max_response_tokens: 30000}", "8B", 8, None,
     [C.PROMPT_RESPONSE_OVER_LENGTH]),
    ("model: {max_model_len: 32768, max_response_tokens: 32768}", "8B", 8, None, [C.PROMPT_OR_RESPONSE_AT_LENGTH]),
    # Past the native context without YaRN: the rollout's vLLM refuses the length (mode both, Trinity's default);
    # mode train starts no rollout, and an SGLang rollout is not vLLM.
    ("model: {max_model_len: 65536}", "8B", 8, None, [C.ROPE_SCALING_MISSING_REFUSED]),
    ("mode: train\nmodel: {max_model_len: 65536}", "8B", 8, None, [C.ROPE_SCALING_MISSING]),
    ("model: {max_model_len: 65536}\nexplorer: {rollout_model: {engine_type: sglang}}", "8B", 8, None,
     [C.ROPE_SCALING_MISSING, C.SGLANG_LENGTH_REFUSED]),  # sglang refuses the length itself (s75)
    # Past Llama 3.1's native context on its own llama3 scaling, which vLLM stretches by no factor: refused alike.
    ("model: {max_model_len: 163840}", "llama-3.1-8b", 8, None, [C.PAST_NATIVE_ON_OWN_SCALING_REFUSED]),
    ("mode: train\nmodel: {max_model_len: 163840}", "llama-3.1-8b", 8, None, []),
    ("model: {max_model_len: 65536, rope_scaling: linear}", "8B", 8, None, [C.ROPE_SCALING_WRONG]),
    (("model: {max_model_len: 65536, rope_scaling: {rope_type: linear, factor: 1.6, "
      "original_max_position_embeddings: 40960, rope_theta: 1000000}}"), "8B", 8, None, [C.ROPE_SCALING_WRONG]),
    # vLLM reads the mapping as given: without its factor it fails (original_max_position_embeddings is said with it)
    ("model: {max_model_len: 65536, rope_scaling: {rope_type: yarn, rope_theta: 1000000}}", "8B", 8, None,
     [C.ROPE_SCALING_UNBUILT_REFUSED, C.ROPE_SCALING_WRONG]),
    # the trainer's missing original length is filled in (s75): only the missing factor
    ("mode: train\nmodel: {max_model_len: 65536, rope_scaling: {rope_type: yarn, rope_theta: 1000000}}", "8B", 8,
     None,
     [C.ROPE_SCALING_WRONG]),
    (("model: {max_model_len: 65536, rope_scaling: {type: yarn, factor: 1.6, original_max_position_embeddings: 40960, "
      "rope_theta: 1000000}}"), "8B", 8, None, [C.ROPE_TYPE_MISSING_REFUSED]),
    ("model: {max_model_len: 65536, rope_scaling: {type: yarn, factor: 1.6, original_max_position_embeddings: 40960}}",
     "8B", 8, "0.5", [C.ROPE_THETA_MISSING, C.ROPE_SCALING_WRONG]),  # no rope_theta: transformers 5 on 0.5 too (s81)
    (("model: {max_model_len: 32768, rope_scaling: {rope_type: llama3, factor: 8.0, low_freq_factor: 1.0, "
      "high_freq_factor: 4.0, original_max_position_embeddings: 8192}}"), "llama-3.1-8b", 8, None,
     [C.ROPE_THETA_MISSING, C.ROPE_THETA_DROPPED]),  # no release named: 0.6's trainer fails without it (s79)
    (("model: {max_model_len: 65536, rope_scaling: {rope_type: yarn, factor: 1.2, "
      "original_max_position_embeddings: 40960, rope_theta: 1000000}}"), "8B", 8, None, [C.ROPE_SCALING_SHORT_REFUSED]),
    (("mode: train\nmodel: {max_model_len: 65536, rope_scaling: {rope_type: yarn, factor: 1.2, "
      "original_max_position_embeddings: 40960, rope_theta: 1000000}}"), "8B", 8, None, [C.ROPE_SCALING_WRONG]),
    (("model: {max_model_len: 65536, rope_scaling: {rope_type: yarn, factor: 4.0, "
      "original_max_position_embeddings: 32768, rope_theta: 1000000}}"), "8B", 8, None, [C.ROPE_SCALING_OFF_GUIDE]),
    ("model: {max_model_len: 4096, rope_scaling: {rope_type: yarn, factor: 4.0}}", "8B", 8, None,
     [C.ROPE_SCALING_UNNEEDED, C.ROPE_SCALING_UNBUILT_REFUSED]),
    ("model: {max_model_len: 4096, rope_scaling: {rope_type: yarn, factor: 4.0}}", "llama-3.1-8b", 8, None,
     [C.ROPE_SCALING_REPLACES_OWN, C.ROPE_SCALING_UNBUILT_REFUSED, C.ROPE_THETA_DROPPED]),
    # Two types that differ: the rollout's vLLM takes rope_type alone, as Trinity hands it the mapping.
    (("model: {max_model_len: 65536, rope_scaling: {rope_type: yarn, type: linear, factor: 1.6, "
      "original_max_position_embeddings: 40960, rope_theta: 1000000}}"), "8B", 8, None, [C.ROPE_SCALING_WRONG]),
    (("mode: train\nmodel: {max_model_len: 65536, rope_scaling: {rope_type: yarn, type: linear, factor: 1.6, "
      "original_max_position_embeddings: 40960, rope_theta: 1000000}}"), "8B", 8, None, [C.ROPE_SCALING_WRONG]),
    (("trainer: {use_dynamic_bsz: false, use_remove_padding: false, trainer_config: {actor_rollout_ref: "
      "{model: {enable_gradient_checkpointing: false}}}}"), "8B", 8, None,  # PPO's critic's forward size unset too,
     # refused beside its engine's sizes unset, which verl 0.8 or later cuts its passes by (critic87)
     [C.DYNAMIC_BATCH_OFF, C.MICRO_BATCH_UNSET_REFUSED, C.MICRO_BATCH_UNSET, C.GRADIENT_CHECKPOINTING_OFF,
      C.REMOVE_PADDING_OFF]),
    ("trainer: {param_offload: true}", "8B", 8, "0.5", [C.TRAINER_OFFLOAD_KEYS_REFUSED]),
    # Trinity 0.6.0's TrainerConfig keys that 0.5.x's lacks: refused by 0.5 (the offload flags under a code of their
    # own), read by 0.6.
    ("trainer: {param_offload: true, use_remove_padding: false, megatron: {}}", "8B", 8, "0.5",
     [C.TRAINER_OFFLOAD_KEYS_REFUSED, C.TRAINER_KEYS_REFUSED]),
    ("trainer: {use_remove_padding: false, critic_warmup: 0}", "8B", 8, "0.6", [C.REMOVE_PADDING_OFF]),
    ("trainer: {use_remove_padding: false, trust_remote_code: false}", "8B", 8, None, [C.REMOVE_PADDING_OFF]),
    (("trainer: {trainer_strategy: fsdp, trainer_config: {actor_rollout_ref: {ref: {fsdp_config: "
      "{offload_policy: true}}}}}"), "8B", 8, None, [C.OFFLOAD_NEEDS_FSDP2]),
    ("trainer: {trainer_config_path: verl.yaml}", "8B", 8, None, [C.DEPRECATED_CONFIG_PATH]),
    ("trainer: {trainer_config_path: verl.yaml}", "8B", 8, "0.6", [C.DEPRECATED_CONFIG_PATH]),
    ("trainer: {trainer_config_path: verl.yaml, trainer_config: {}}", "8B", 8, "0.5", [C.CONFIG_PATH_REFUSED]),
    (("trainer: {trainer_config_path: verl.yaml, trainer_config: {actor_rollout_ref: {}}}"), "8B", 8, "0.5",
     [C.DEPRECATED_CONFIG_PATH]),
    (("mode: train\nalgorithm: {algorithm_type: dpo}\nbuffer: {trainer_input: {experience_buffer: {path: /data/d}}}\n"
      "trainer: {use_dynamic_bsz: false, trainer_config: {"
      "actor_rollout_ref: {actor: {ppo_micro_batch_size_per_gpu: 1}}}}"), "8B", 8, "0.6",
     [C.MICRO_BATCH_UNSET, C.MICRO_BATCH_UNSET, C.DPO_PAIR_SPLIT]),  # the ref's and the rollout's unset (review83a)
    ("mode: train\nalgorithm: {algorithm_type: dpo}", "8B", 8, None, [C.DPO_PAIR_DYNAMIC, C.TRAINER_INPUT_MISSING]),
    ("model: {max_model_len: 32768}\ntrainer: {ulysses_sequence_parallel_size: 2}", "8B", 8, None, []),
]
"""Small configs (nested mappings) and the codes of the problems `trinity_config_problems` finds in them."""


@pytest.mark.parametrize(("text", "model", "gpus", "version", "codes"), CHECKED)
def test_each_kind_of_config_problem_gives_its_code(text: str, model: str, gpus: int, version: TrinityVersion | None,
                                                    codes: list[ConfigProblemCode]):
    mapping = load_config_mapping(text, "trinity.yaml")
    found = trinity_config_problems(mapping, solver.load_catalog().model(model), gpus, version=version,
                                    strategy_noted=True)
    assert [problem.code for problem in found] == codes
    # check_trinity_config, the words alone, as it always gave them
    words = check_trinity_config(mapping, solver.load_catalog().model(model), gpus, version=version,
                                 strategy_noted=True)
    assert words == [problem.words for problem in found]


CONFIG_HEAD = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
               "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n")
"""Qwen3-8B at 32768 tokens on one node of 8 GPUs, 2 of them rollout engines: what the configs below add to."""
GRPO = "algorithm: {algorithm_type: grpo}\n"
"""An algorithm without a critic (PPO, Trinity's default, trains one: a note of its own)."""
ROLES = GRPO + "trainer: {trainer_strategy: %s, %strainer_config: {actor_rollout_ref: {actor: %s}}}\n"
NOTED: list[tuple[str, list[ConfigProblemCode]]] = [
    (ROLES % ("fsdp2", "offload_policy: true, ", "{fsdp_config: {offload_policy: false}}"),
     [C.OFFLOAD_POLICIES_DISAGREE]),
    (ROLES % ("fsdp2", "", "{fsdp_config: {offload_policy: true}}"), [C.TRAINER_OFFLOAD_FLAGS_UNSET]),
    (ROLES % ("fsdp2", "", "{fsdp_config: {param_offload: true}}"), [C.OFFLOAD_WITHOUT_POLICY]),
    (ROLES % ("fsdp", "", "{fsdp_config: {param_offload: true}}"), [C.OFFLOAD_NEEDS_FSDP2]),
    (ROLES % ("fsdp", "", "{engine: {param_offload: true}}"), [C.OFFLOAD_FLAGS_UNDER_ENGINE]),
    (ROLES % ("megatron", "", "{}"), [C.NOT_FSDP_STRATEGY]),
    (ROLES % ("fsdp", "", "{ulysses_sequence_parallel_size: 2}"), [C.ROLE_SP_DIFFERS]),
    ("mode: train\n" + GRPO, [C.TRAIN_BATCH_REQUIRED]),
    ("algorithm: {algorithm_type: ppo}\n", [C.CRITIC_TRAINED]),
    (GRPO + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_rank: 8}}}}\n", [C.LORA_COUNTED_AS_FULL]),
    (ROLES % ("fsdp", "", "{entropy_from_logits_with_chunking: true}"), [C.CHUNKED_ENTROPY]),
    (GRPO, []),
]
"""What `CONFIG_HEAD` is followed by, and the codes of the notes `read_trinity_config` makes on it."""


@pytest.mark.parametrize(("text", "codes"), NOTED)
def test_each_kind_of_note_on_a_config_gives_its_code(text: str, codes: list[ConfigProblemCode]):
    config = read_trinity_config(CONFIG_HEAD + text, "trinity.yaml", {})
    assert (list(config.note_codes), len(config.notes)) == (codes, len(codes))


def test_a_config_built_in_code_gives_one_code_per_note():
    # with_config_verdicts pairs each note with its code: a config whose notes lack codes is refused when built.
    config = read_trinity_config(CONFIG_HEAD + "algorithm: {algorithm_type: ppo}\n", "trinity.yaml", {})
    with pytest.raises(ValidationError, match="0 note_codes for 1 notes: give one code per note"):
        config.model_validate({**config.model_dump(), "note_codes": ()})


def test_a_config_without_its_length_is_noted_so_by_code():
    config = read_trinity_config("model: {model_path: Qwen/Qwen3-8B, max_prompt_tokens: 2048, max_response_tokens: "
                                 "2048}\nalgorithm: {algorithm_type: grpo}\n", "trinity.yaml", {})
    assert (config.note_codes, config.notes) == ((C.LENGTH_FROM_PROMPT_RESPONSE,), ((
        "model.max_model_len is not set: Trinity takes max_prompt_tokens + max_response_tokens = 2048 + 2048 = 4096, "
        "as the verdict does"),))


DEFAULT_BUDGET_7B = ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen2.5-7B-Instruct\n"
                     "  max_model_len: 131072\n"
                     "  rope_scaling: {rope_type: yarn, factor: 4.0, original_max_position_embeddings: 32768}\n"
                     "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2}}\n")
"""Trinity-RFT #398's config (Qwen2.5-7B at 131072 tokens, 6 trainer GPUs), less its trainer section."""
REF_SP_1 = ("trainer: {ulysses_sequence_parallel_size: 2, trainer_config: {actor_rollout_ref: {ref: "
            "{ulysses_sequence_parallel_size: 1}}}}\n")
"""The trainer at SP 2, the ref at its own SP 1."""
REF_SP_2 = "trainer: {trainer_config: {actor_rollout_ref: {ref: {ulysses_sequence_parallel_size: 2}}}}\n"
"""The trainer (and so the actor) at SP 1, the ref at its own SP 2."""
FROM_CONFIG: list[tuple[str, tuple[str, ...], str, BrokenRuleCode | None, list[ConfigProblemCode]]] = [
    # (config, flags, PYTORCH_CUDA_ALLOC_CONF, the broken rule's code, the problems' codes) as --from-config gives
    (("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-0.6B, max_model_len: 4096}\n"
      "cluster: {node_num: 2, gpu_per_node: 4}\nexplorer: {rollout_model: {engine_num: 2}}\n"), ("--gpu", "a100-80g"),
     "", BrokenRuleCode.WHOLE_NODES, []),
    (CONFIG_HEAD + GRPO + "trainer: {ulysses_sequence_parallel_size: 3}\n",
     ("--gpu", "h100"), "", BrokenRuleCode.SP_MODEL_HEADS, []),
    (CONFIG_HEAD + GRPO + "trainer: {ulysses_sequence_parallel_size: 4}\n",
     ("--gpu", "h100"), "", BrokenRuleCode.SP_DIVIDES_GPUS, []),
    (CONFIG_HEAD + GRPO + "trainer: {ulysses_sequence_parallel_size: 2}\n",  # InternLM2's own code: test_spcompat_s70
     ("--gpu", "h100", "--model-config", str(ROOT / "tests/data/hf-configs/internlm2-7b.json")), "",
     BrokenRuleCode.SP_MODEL_ATTENTION,  # dynamic batching and remove padding on, Trinity's defaults:
     [C.MICRO_BATCH_UNBOUNDED, *[C.REMOVE_PADDING_ON] * 2]),  # test_padbound_s71, test_remotepad_s70
    (("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
      "cluster: {node_num: 2, gpu_per_node: 4}\nexplorer: {rollout_model: {engine_num: 0}}\n"
      "trainer: {ulysses_sequence_parallel_size: 8}\n"), ("--gpu", "h100"), "", BrokenRuleCode.SP_WITHIN_NODE, []),
    (CONFIG_HEAD + GRPO + "buffer: {train_batch_size: 100}\n", ("--gpu", "h100"), "",
     BrokenRuleCode.BATCH_DIVIDES, []),
    (DEFAULT_BUDGET_7B + "trainer: {ulysses_sequence_parallel_size: 2, max_token_len_per_gpu: 65536}\n",
     ("--gpu", "h20"), "", None, [C.ROPE_THETA_MISSING, C.LOWERED_TOKEN_BUDGET]),  # #398's YaRN has no rope_theta
    (CONFIG_HEAD + GRPO + "trainer: {trainer_config: {actor_rollout_ref: {actor: "
     "{ppo_max_token_len_per_gpu: 131072}, ref: {log_prob_max_token_len_per_gpu: 40000}}}}\n", ("--gpu", "h100"), "",
     None, [C.TOKEN_BUDGET_ABOVE_VERDICT, C.TOKEN_BUDGET_BELOW_VERDICT]),
    (CONFIG_HEAD + "algorithm: {algorithm_type: ppo}\ntrainer: {trainer_config: {critic: "
     "{ppo_max_token_len_per_gpu: 200000}}}\n", ("--gpu", "h100"), "expandable_segments:true", None,
     [C.CRITIC_TRAINED, C.CRITIC_BUDGET_ABOVE_VERDICT, C.ALLOC_CONF_REFUSED]),
    # settings that fit, in configs that Trinity refuses as written (current.refused)
    (CONFIG_HEAD.replace("32768}", "8192, max_prompt_tokens: 4096, max_response_tokens: 8192}") + GRPO,
     ("--gpu", "h100"), "expandable_segments:True", None, [C.PROMPT_RESPONSE_OVER_LENGTH]),
    (CONFIG_HEAD.replace("32768", "8192") + GRPO + "trainer: {trainer_config_path: verl.yaml, param_offload: false}\n",
     ("--gpu", "h100", "--trinity-version", "0.5"), "expandable_segments:True", None,
     [C.TRAINER_OFFLOAD_KEYS_REFUSED, C.CONFIG_PATH_REFUSED]),
    # Trinity 0.5 checks the ref's SP as the actor's: 6 GPUs / its SP 1 do not divide 75 (the actor's 3 do), so no
    # line says how the ref runs at it; 0.6 on verl before 0.8 refuses it alike, and on verl 0.8 or later runs the ref
    # at the trainer's SP: one role-sp-differs line says both (test_legacyref2_s85).
    (CONFIG_HEAD + GRPO + REF_SP_1 + "buffer: {train_batch_size: 75}\n", ("--gpu", "h100", "--trinity-version", "0.5"),
     "", None, [C.BATCH_DIVIDES]),
    (CONFIG_HEAD + GRPO + REF_SP_1 + "buffer: {train_batch_size: 75}\n", ("--gpu", "h100", "--trinity-version", "0.6"),
     "", None, [C.ROLE_SP_DIFFERS]),
    # A ref SP 2 above the actor's 1: Trinity 0.5 builds no SP groups, and verl 0.7's ref forward fails (refused).
    (CONFIG_HEAD + GRPO + REF_SP_2, ("--gpu", "h100", "--trinity-version", "0.5"), "", None,
     [C.REF_SP_UNGROUPED_REFUSED]),
    # An empty list of LoRA configs: Trinity takes the first and fails to load the config (refused).
    (CONFIG_HEAD.replace("32768}", "32768, lora_configs: []}") + GRPO, ("--gpu", "h100"), "", None,
     [C.LORA_CONFIGS_REFUSED]),
    # An empty adapter path turns LoRA on, and verl's copy_to_local fails on it: refused under Trinity 0.5; Trinity 0.6
    # on verl 0.8 or later ignores the key.
    (CONFIG_HEAD + GRPO + 'trainer: {trainer_config: {actor_rollout_ref: {model: {lora_adapter_path: ""}}}}\n',
     ("--gpu", "h100", "--trinity-version", "0.5"), "", None, [C.LORA_COUNTED_AS_FULL, C.EMPTY_ADAPTER_PATH_REFUSED]),
    (CONFIG_HEAD + GRPO + 'trainer: {trainer_config: {actor_rollout_ref: {model: {lora_adapter_path: ""}}}}\n',
     ("--gpu", "h100"), "", None, [C.LORA_COUNTED_AS_FULL, C.EMPTY_ADAPTER_PATH]),
    # A path ending in "/": verl's copy_to_local asserts it does not; the model's fails with every release, an adapter
    # path under trainer_config only with verl before 0.8.
    (CONFIG_HEAD.replace("Qwen3-8B,", "Qwen3-8B/,") + GRPO, ("--gpu", "h100"), "", None, [C.TRAILING_SLASH_REFUSED]),
    (CONFIG_HEAD + GRPO + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_adapter_path: a/}}}}\n",
     ("--gpu", "h100"), "", None, [C.LORA_COUNTED_AS_FULL, C.TRAILING_SLASH]),
    # A LoRA rank of true: Trinity's typed int field refuses it; under trainer_config, Trinity 0.6 on verl 0.8 or later
    # ignores the key.
    (CONFIG_HEAD.replace("32768}", "32768, lora_configs: [{lora_rank: true}]}") + GRPO, ("--gpu", "h100"), "", None,
     [C.LORA_COUNTED_AS_FULL, C.LORA_RANK_NOT_A_NUMBER_REFUSED]),
    (CONFIG_HEAD + GRPO + "trainer: {trainer_config: {actor_rollout_ref: {model: {lora_rank: true}}}}\n",
     ("--gpu", "h100"), "", None, [C.LORA_RANK_NOT_A_NUMBER]),
    # A null where Trinity's own config takes no null: every release refuses it as it loads the config.
    (CONFIG_HEAD + GRPO + "trainer: {ulysses_sequence_parallel_size: null}\n", ("--gpu", "h100"), "", None,
     [C.TYPED_NULL_REFUSED]),
    # A null in a flag under trainer_config: Trinity 0.5 refuses it; 0.6 fails on it before verl 0.8, or reads it as
    # false from 0.8.
    (CONFIG_HEAD + GRPO + "trainer: {trainer_config: {actor_rollout_ref: {model: "
     "{enable_gradient_checkpointing: null}}}}\n", ("--gpu", "h100"), "", None, [C.TYPED_NULL]),
    # A ref model of its own: Trinity 0.5's typed Ref lacks the key; 0.6 drops it on verl before 0.8.
    (CONFIG_HEAD + GRPO + "trainer: {trainer_config: {actor_rollout_ref: {ref: {model: {path: /m}}}}}\n",
     ("--gpu", "h100", "--trinity-version", "0.5"), "", None, [C.REF_MODEL_REFUSED]),
    (CONFIG_HEAD + GRPO + "trainer: {trainer_config: {actor_rollout_ref: {ref: {model: {path: /m}}}}}\n",
     ("--gpu", "h100"), "", None, [C.REF_MODEL]),
    # A key every Trinity 0.5 release lacks (0.6's rollout parallel sizes); one 0.5.0 and 0.5.1 lack, 0.5.2 has.
    (CONFIG_HEAD.replace("engine_num: 2", "engine_num: 2, data_parallel_size: 1") + GRPO,
     ("--gpu", "h100", "--trinity-version", "0.5"), "", None, [C.UNKNOWN_KEY_REFUSED]),
    (CONFIG_HEAD.replace("engine_num: 2", "engine_num: 2, data_parallel_size: 1") + GRPO, ("--gpu", "h100"), "",
     None, []),
    (CONFIG_HEAD.replace("max_model_len: 32768", "max_model_len: 32768, external_model: {enable: false}") + GRPO,
     ("--gpu", "h100", "--trinity-version", "0.5"), "", None, [C.UNKNOWN_KEY]),
    # 6 GPUs / SP 2 divide 75, the 6 GPUs do not: Trinity 0.5.0 and 0.5.1 refuse it, 0.5.2 and 0.6 take it.
    (CONFIG_HEAD + GRPO + "trainer: {ulysses_sequence_parallel_size: 2}\nbuffer: {train_batch_size: 75}\n",
     ("--gpu", "h100", "--trinity-version", "0.5"), "", None, [C.BATCH_DIVIDES_TRAINER_GPUS]),
    (CONFIG_HEAD + GRPO + "trainer: {ulysses_sequence_parallel_size: 2}\nbuffer: {train_batch_size: 75}\n",
     ("--gpu", "h100"), "", None, []),
    # A rollout engine of one GPU cannot hold Qwen3-8B's 15.3 GiB of weights in the 13.4 GiB vLLM takes of a 16 GiB
    # card (test_rolloutfit_s73).
    (CONFIG_HEAD + GRPO, ("--gpu", "my-16g", "--gpu-memory", "16"), "", None, [C.ROLLOUT_ENGINE_MEMORY_REFUSED]),
    # the docs' example, and the tests' user config (its YaRN within the native context, its factor unset)
    ((ROOT / "docs/examples/trinity.yaml").read_text(encoding="utf-8"), ("--gpu", "h20"), "expandable_segments:True",
     None, []),
    ((ROOT / "tests/data/trinity/user-config.yaml").read_text(encoding="utf-8"), ("--gpu", "h100"), "", None,
     [C.ROPE_SCALING_UNNEEDED, C.UNRESOLVED_VALUE]),
]
"""Configs as `solve --from-config --json` judges them: the codes beside `current.broken_rule` and
`current.config_problems`."""


@pytest.mark.parametrize(("text", "flags", "alloc_conf", "rule", "codes"), FROM_CONFIG)
def test_from_config_gives_the_codes_of_the_rule_broken_and_of_each_problem(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, flags: tuple[str, ...], alloc_conf: str,
        rule: BrokenRuleCode | None, codes: list[ConfigProblemCode]):
    for variable in ("FACTOR", "MAX_MODEL_LEN", "MODEL_PATH"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", alloc_conf)
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    _, out, _ = cli("--from-config", str(config), *flags, "--json")
    [answer] = json.loads(out)
    current = answer["current"]
    assert (current["broken_rule_code"], current["config_problem_codes"]) == (rule, codes)
    assert (current["broken_rule"] is None, len(current["config_problems"])) == (rule is None, len(codes))
    assert jsonschema_errors("solve", [answer]) == []


def test_the_representative_configs_give_every_code():
    given = [code for *_, codes in CHECKED for code in codes] + [code for _, codes in NOTED for code in codes]
    given += [code for *_, codes in FROM_CONFIG for code in codes] + [C.LENGTH_FROM_PROMPT_RESPONSE]
    given += [C.ALLOC_CONFS_DISAGREE, C.ALLOC_CONF_NEW_NAME]  # other allocator variables: test_rocmuser_s55
    given += [C.TRAINER_KEYS_MERGED_REFUSED, C.ANCHORED_KEY_CHANGED]  # a patched config's: test_patchcheck_s57
    given += [C.ROPE_FACTOR_SKIPPED_REFUSED]  # a Gemma 3's, read from its config.json: test_vllmlen2_s63
    given += [C.PAST_DERIVED_LENGTH_REFUSED]  # a shorter length key, read from a config.json: test_vllmkeys_s64
    given += [C.ALLOC_CONF_IN_EXPLORER]  # explorer.env_vars, beside CONFIG_HEAD's explorer: test_explorerenv_s67
    given += [C.SP_MODEL_ATTENTION]  # a ref's own SP for InternLM2's own code: test_spcompat_s70
    given += [C.MICRO_BATCH_UNSET]  # InternLM2's with dynamic batch sizes off: test_padbound_s71
    given += [C.MICRO_BATCH_UNSET_REFUSED]  # a null size, or the critic's forward unset: test_ownbudget_s72
    given += [C.ROPE_PARTIAL_DROPPED]  # a config.json's partial_rotary_factor: test_ropeseven_s74
    given += [C.ROPE_PARTIAL_DIFFERS]  # a MiniMax-M2 config.json's rotary_dim alone: test_ropeseven_s74
    given += [C.NO_SUCH_KEY_REFUSED]  # a key no Trinity release has there: test_persona39_s74
    given += [C.LORA_RANK_VLLM_REFUSED]  # a LoRA rank vLLM refuses as max_lora_rank: test_smallslips19_s74
    given += [C.SGLANG_LENGTH_REFUSED]  # an sglang rollout past the native context: test_ropeeight_s75
    given += [C.ENGINE_ARGS_LORA_REFUSED, C.SGLANG_LORA_REFUSED]  # the rollout's LoRA: test_lorarest3_s75
    given += [C.ROLLOUT_TP_HEADS_REFUSED]  # a rollout TP the heads do not allow: test_persona41_s75
    given += [C.ENGINE_NODES_REFUSED]  # an engine across nodes Trinity 0.6 refuses: test_persona41_s75
    given += [C.SGLANG_PARALLEL_REFUSED]  # an SGLang TP no multiple of its DP: test_sglangdp_s75
    given += [C.ENGINE_ARGS_REPEATED_REFUSED, C.LORA_TARGETS_SAVED_SPLIT]  # test_lorarest4_s76
    given += [C.LORA_MOE_CONFIG_UNSAVED]  # LoRA on a mixture of experts: test_lorarest5_s76
    given += [C.LORA_MOE_CONFIG_UNSAVED_REFUSED]  # the same under 0.6: test_release06b_s83
    given += [C.LORA_TARGETS_ASSUMED]  # a regex on an unknown model type's assumed names: test_peftnames_s77
    given += [C.DPO_PAIR_DOUBLED]  # DPO's actor size 2 where the release may be 0.6: test_dpofrag_s77
    given += [C.DPO_DOUBLED_ABOVE_VERDICT]  # DPO's sizes doubled past the budget before verl 0.8: test_smallslips44_s83
    given += [C.LORA_TARGETS_ONE_TRANSFORMERS]  # one transformers' names alone take it: test_smallslips28_s78
    given += [C.ROPE_SCALING_UNTRAINED]  # a Phi-3's yarn, built as given: test_phi3rope_s78
    given += [C.ROPE_THETA_MISSING_REFUSED]  # a rope_scaling without rope_theta on 0.6: test_ropetheta_s78
    given += [C.LORA_EXCLUDED_ADAPTED]  # an exclusion of a mixture's experts PEFT adapts: test_loracautions_s81
    given += [C.KEY_DROPPED]  # a key 0.6's legacy veRLConfig lacks: test_release06_s82
    given += [C.VERL_KEY_REFUSED, C.VERL_KEY]  # a key 0.5's veRLConfig lacks: test_algorelease_s82
    given += [C.UNKNOWN_ALGORITHM_REFUSED, C.UNKNOWN_ALGORITHM]  # an algorithm 0.5 lacks: test_algorelease_s82
    given += [C.ALGORITHM_MODE_REFUSED]  # SFT outside mode train: test_algorelease_s82
    given += [C.DPO_MINI_BATCH_SPLIT, C.DPO_MINI_BATCH_SPLIT_REFUSED]  # DPO's mini-batch: test_smallslips44_s83
    given += [C.MINI_BATCH_SPLIT, C.MINI_BATCH_SPLIT_REFUSED]  # another algorithm's: test_dpoverl08_s85
    given += [C.ROLE_SP_DIFFERS_REFUSED]  # a critic's SP no verl line runs: test_lastfix85_s85
    given += [C.CRITIC_BUDGET_RAISED]  # the trainer's budget 0.5.0 raises for the critic: test_criticspmem_s84
    given += [C.NOT_FSDP_CRITIC_STRATEGY, C.NOT_FSDP_CRITIC_STRATEGY_REFUSED]  # a critic's strategy: test_batchcritic_s75
    given += [C.MICRO_BATCH_DEPRECATED_SIZE]  # a whole-batch size of one sequence per GPU: test_padbound_s71
    given += [C.FSDP_SIZE_HYBRID, C.FSDP_SIZE_MESH, C.FSDP_SIZE_MESH_REFUSED]  # a role's fsdp_size: test_batchkeys_s74
    given += [C.ROLE_SP_BELOW_ONE, C.ROLE_SP_BELOW_ONE_REFUSED]  # an actor's SP of 0 with 0.5: test_mutmoe_s53
    given += [C.UNKNOWN_STRATEGY, C.UNKNOWN_STRATEGY_REFUSED, C.MODEL_PATH_OVERWRITTEN]  # test_batchcritic_s75
    given += [C.REF_NOT_BUILT]  # GRPO with kl_loss_fn none, no ref on 0.5.2: test_refmodel_s72
    assert set(given) == set(ConfigProblemCode)
    assert {rule for *_, rule, _ in FROM_CONFIG} == {*BrokenRuleCode, None}


def test_a_config_verdict_refuses_codes_that_do_not_match_its_words():
    current = {"config": "trinity.yaml", "gpus": 6, "env": True, "offload": False, "sp": 1, "max_model_len": 4096,
               "trains": False, "plan": None}
    with pytest.raises(ValidationError, match="1 config_problem_codes for 2 config_problems"):
        CurrentSettings(**current, config_problems=("a", "b"), config_problem_codes=(C.MISSPELT_KEY,))
    with pytest.raises(ValidationError, match="broken_rule_code without broken_rule"):
        CurrentSettings(**current, broken_rule_code=BrokenRuleCode.WHOLE_NODES)
    # JSON made before codes has none: it still reads
    assert CurrentSettings(**current, config_problems=("a",), broken_rule="b").config_problem_codes == ()


def test_a_config_verdict_derives_refused_from_its_codes_and_reads_it_back():
    current = {**CURRENT_SETTINGS, "config_problems": ["a", "b"],
               "config_problem_codes": ["critic-trained", "alloc-conf-refused"]}
    settings = CurrentSettings.model_validate({key: value for key, value in current.items() if key != "refused"})
    assert (settings.refused, settings.model_dump(mode="json")["refused"]) == (True, True)
    assert CurrentSettings.model_validate({**current, "refused": True}) == settings
    with pytest.raises(ValidationError, match="refused is False, but config_problem_codes and broken_rule_code say "
                                              "True"):
        CurrentSettings.model_validate({**current, "refused": False})
    # s89: SP the config's own model's heads do not suit refuses it (every release stops on it); another rule, or
    # another model's heads (--model), does not; false beside it is JSON printed before the rule counted
    rule = {key: value for key, value in current.items() if key != "refused"} | {
        "config_problem_codes": ["critic-trained"] * 2, "broken_rule": "Qwen3-8B: SP=3 does not divide its 32 "
        "attention heads", "broken_rule_code": "sp-model-heads"}
    assert CurrentSettings.model_validate(rule).refused
    assert CurrentSettings.model_validate({**rule, "refused": False}).refused
    assert not CurrentSettings.model_validate({**rule, "config_model": "Qwen3-4B"}).refused
    with pytest.raises(ValidationError, match="refused is True, but config_problem_codes and broken_rule_code say "
                                              "False"):
        CurrentSettings.model_validate({**rule, "broken_rule_code": "sp-within-node", "refused": True})
    # release89b: SP not dividing the GPUs refuses it on the config's own GPUs, not the budget's; GPUs that are no
    # whole nodes refuse it on the config's own GPUs and node size, not --node-gpus' (nor in JSON made before it)
    gpus = {**rule, "broken_rule": "SP=4 does not divide 6 GPUs", "broken_rule_code": "sp-divides-gpus"}
    nodes = {**rule, "broken_rule": "12 GPUs span nodes of 8 (cluster.gpu_per_node) but are not whole nodes",
             "broken_rule_code": "whole-nodes", "gpus": 12}
    assert [CurrentSettings.model_validate(settings).refused for settings in (
        gpus, {**gpus, "gpus_given": False}, {**gpus, "config_model": "Qwen3-4B"}, {**nodes, "nodes_given": True},
        nodes, {**nodes, "nodes_given": True, "gpus_given": False})] == [True, False, True, True, False, False]
    # checks90: a batch the ranks do not divide refuses it on the config's own GPUs and batch (every release raises),
    # not on --train-batch-size's or the budget's GPUs (nor in JSON made before batch_given)
    batch = {**rule, "broken_rule": "the train batch of 64 (buffer.train_batch_size) must split evenly over the "
             "data-parallel ranks, and 3 (6 GPUs / SP=2) do not divide it", "broken_rule_code": "batch-divides"}
    assert [CurrentSettings.model_validate(settings).refused for settings in (
        {**batch, "batch_given": True}, batch, {**batch, "batch_given": True, "gpus_given": False})] == [
        True, False, False]
    with pytest.raises(ValidationError, match="refused is True, but config_problem_codes and broken_rule_code say "
                                              "False"):
        CurrentSettings.model_validate({**nodes, "refused": True})
    # a code that refuses nothing, and JSON made before codes (or before refused): not refused
    assert not CurrentSettings.model_validate({**current, "config_problem_codes": ["critic-trained"] * 2}).refused
    assert not CurrentSettings.model_validate({**current, "config_problem_codes": []}).refused
    # codes that are no codes: the field's own validation names them, not the derived flag
    with pytest.raises(ValidationError, match="config_problem_codes.1\n  Input should be") as refused:
        CurrentSettings.model_validate({**current, "config_problem_codes": ["critic-trained", "nonsense"],
                                        "refused": True})
    assert "refused is" not in str(refused.value)


CONTRADICTING_A100_CELLS = ('gpu: A100-80GB\nmemory_gb: 80\nsource: mine\ntables:\n  - gpus: 4\n'
                            '    section: "4 x A100"\n    models: [Qwen3-8B, Qwen3-14B]\n    rows:\n'
                            '      - {max_model_len: 4096, cells: {Qwen3-8B: "-", Qwen3-14B: vanilla}}\n'
                            '      - {max_model_len: 12288, cells: {Qwen3-8B: "-", Qwen3-14B: "-"}}\n')
"""Cells of 4 A100s that contradict the documented tables, pull two coefficients to an edge beside them and are
mispredicted by the fit: every list of ``solve calibrate --json`` has something in it (with --with-tables)."""


@pytest.mark.parametrize("mine", [None, "docs/examples/my-cells.yaml", CONTRADICTING_A100_CELLS])
def test_real_calibrate_json_is_valid_against_its_schema_and_is_the_apis_calibration(
        cli, monkeypatch, tmp_path: Path, mine: str | None):
    # docs/json.md: every key in the schema's order, the Calibration that calibrate_memory_model returns, which reads
    # back from the JSON (poor_fit derived again); the warnings and notes stay on stderr.
    monkeypatch.chdir(ROOT)
    cells = [] if mine is None else [Path(mine)] if mine.endswith(".yaml") else [tmp_path / "mine.yaml"]
    if mine == CONTRADICTING_A100_CELLS:
        cells[0].write_text(mine, encoding="utf-8")
    flags = [word for path in cells for word in ("--cells", str(path), "--with-tables")]
    status, out, err = cli("calibrate", *flags, "--json")
    printed, schema = json.loads(out), json.loads(json_schema("calibrate"))
    assert (status, list(printed), jsonschema_errors("calibrate", printed)) == (0, list(schema["properties"]), [])
    fitted = solver.calibrate_memory_model(cells, with_tables=bool(cells))
    assert printed == fitted.model_dump(mode="json") and solver.Calibration.model_validate_json(out) == fitted
    if mine == CONTRADICTING_A100_CELLS:
        assert (printed["at_bounds"], len(printed["table_contradictions"]), len(printed["mispredicted"])) == (
            ["recompute 0.1", "usable_env 1"], 4, 4)
        # stderr names three of them, the JSON every one
        assert printed["poor_fit"] is True and printed["your_cells"] == 4
        assert [phrase in err for phrase in printed["mispredicted"]] == [True, True, True, False]
    else:
        assert printed["poor_fit"] is False and err == ""


def test_calibrate_json_with_out_writes_the_same_file_and_prints_only_json(cli, tmp_path: Path):
    # With --out the file is written as without --json, and stdout holds the JSON alone: no "wrote" line, no
    # multipliers moved, no command to plan with (the JSON's first_principles and coefficients say those).
    cells, plain, as_json = ROOT / "docs" / "examples" / "my-cells.yaml", tmp_path / "plain.yaml", tmp_path / "j.yaml"
    status, out, _ = cli("calibrate", "--cells", str(cells), "--out", str(plain))
    assert status == 0 and out.startswith(f"wrote {plain}: ")
    status, out, _ = cli("calibrate", "--cells", str(cells), "--out", str(as_json), "--json")
    printed = json.loads(out)
    assert status == 0 and as_json.read_bytes() == plain.read_bytes()
    assert solver.load_memory_model(as_json).model_dump(mode="json") == printed["memory_model"]
    assert printed["first_principles"] == ["states", "gathered", "checkpoints", "recompute", "sp_buffers", "overhead"]


def test_calibrate_json_whose_poor_fit_the_other_fields_contradict_is_refused(cli):
    printed = json.loads(cli("calibrate", "--json")[1])
    assert (printed["poor_fit"], printed["mispredicted"], printed["your_cells"]) == (False, [], 0)
    with pytest.raises(ValidationError, match="poor_fit is True, but mispredicted and your_cells say False"):
        solver.Calibration.model_validate({**printed, "poor_fit": True})
    one_of_one = {**printed, "mispredicted": ["a cell"], "your_cells": 1}
    assert solver.Calibration.model_validate({**one_of_one, "poor_fit": True}).poor_fit is True


@pytest.mark.parametrize(("text", "flags", "alloc_conf"), [(text, flags, alloc_conf)
                                                           for text, flags, alloc_conf, *_ in FROM_CONFIG])
def test_checks_exit_status_agrees_with_the_verdict(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                                                    flags: tuple[str, ...], alloc_conf: str):
    # --check fails exactly where an answer has no plan, or its verdict does not say "it trains": its settings do not
    # train, or the config as written is refused (current.refused); the text says which, once per answer.
    for variable in ("FACTOR", "MAX_MODEL_LEN", "MODEL_PATH"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", alloc_conf)
    config = tmp_path / "trinity.yaml"
    config.write_text(text, encoding="utf-8")
    answers = json.loads(cli("--from-config", str(config), *flags, "--json")[1])
    currents = [answer["current"] for answer in answers]
    fails = any(not answer["plans"] for answer in answers) or any(
        current is None or not current["trains"] or current["refused"] for current in currents)
    assert cli("--from-config", str(config), *flags, "--check")[0] == (1 if fails else 0)
    said = " ".join(cli("--from-config", str(config), *flags)[1].split())
    trains = [current["refused"] for current in currents if current is not None and current["trains"]]
    assert (said.count(": it trains ("), said.count(", but the config as written is refused (")) == (
        trains.count(False), trains.count(True))
