"""The loader: the shipped tables load, and every kind of broken file is rejected in one clear line."""

from __future__ import annotations

import json
import re
import shutil
import tracemalloc
from pathlib import Path

import pydantic
import pytest
import yaml
from conftest import qwen3_8b_checkpoint
from hypothesis import given
from hypothesis import strategies as st

import solver.tables
from solver.tables import (
    ESCALATION_ORDER,
    GpuType,
    QueryError,
    RefusedNameError,
    Setting,
    Table,
    TableError,
    TableOrigin,
    counted,
    described_gpu_type,
    holds_text,
    load_catalog,
    load_gpu_type,
    load_memory_model,
    load_model_config,
    load_trinity_fields,
    load_weights,
    read_user_file,
    resolved_path,
    same_file,
    shipped_tables_directory,
    vouches_for,
)
from solver.tables.bounds import MAX_NAME_CHARACTERS
from solver.tables.inputs import TrinityFields
from solver.tables.reading import load_models, load_validated, yaml_error_place
from solver.tables.text import first_repeated, normalise, smi_name_form

MALFORMED = Path(__file__).parent / "data" / "malformed"
MODELS = load_catalog().models

REJECTIONS = {
    "unknown-setting": "table gpus=2, row max_model_len=8192, cells: Qwen3-4B: unknown setting 'Turbo' in 'Env + Turbo'",
    "setting-out-of-order": "table gpus=2, row max_model_len=8192, cells: Qwen3-0.6B: setting 'SP=2 + Env' is not in the source's form; write 'Env + SP=2'",
    "sp-zero": "table gpus=2, row max_model_len=8192, cells: Qwen3-0.6B: 'SP=0': an SP degree is at least 2",
    "empty-cell": "table gpus=2, row max_model_len=8192, cells: cell for Qwen3-4B must be text",
    "duplicate-row": "table gpus=2: duplicate row max_model_len=4096",
    "decreasing-rows": "table gpus=2: row max_model_len=4096 comes after max_model_len=8192; rows must increase",
    "missing-cell": "table gpus=2: row max_model_len=8192: no cell for Qwen3-4B",
    "no-models": "table gpus=2: the table names no models",
    "no-rows": "table gpus=2: the table has no rows",
    "cells-not-mapping": "table gpus=2, row max_model_len=4096, cells: cells must be a mapping of model name to setting",
    "unknown-model-cell": "table gpus=2: row max_model_len=8192: cell for 'Qwen3-9B', which is not among the",
    "unknown-model-column": "table gpus=2: unknown model 'Qwen3-9B' in the table's models",
    "sp-not-dividing": ("table gpus=2: row max_model_len=8192, Qwen3-4B: SP=4 does not divide the table's 2 GPUs "
                        "(it takes SP=2)"),
    "sp-not-dividing-twelve": ("table gpus=12: row max_model_len=8192, Qwen3-14B: SP=8 does not divide the table's "
                               "12 GPUs (it takes SP=2 or SP=4)"),
    "sp-against-heads": ("table gpus=3: row max_model_len=8192, Qwen3-4B: SP=3 does not divide its 32 attention heads "
                         "(Trinity and verl refuse it)"),
    "negative-length": "table gpus=2, row max_model_len=-8192, max_model_len: must be above 0, got -8192",
    "zero-gpus": "table gpus=0, gpus: must be above 0, got 0",
    "zero-memory": "memory_gb: must be above 0, got 0",
    "rocm-not-bool": "rocm: must be true or false, got 2",  # pydantic's own words were 'Input should be a valid ...'
    "huge-memory": "memory_gb: must be at most 4096, got 1000000000000000000000000000000",
    "huge-gpus": "table gpus=100000000000000000000, gpus: must be at most 65536, got 100000000000000000000",
    "quoted-number": "table gpus=2, row max_model_len=8192, max_model_len: must be a whole number, got '8192'",
    "unknown-field": "table gpus=2, row max_model_len=8192: unknown field 'colour'",
    "missing-field": "missing field 'memory_gb'",
    "duplicate-key": "line 3: key 'gpu' appears twice",
    "complex-key": "line 3: a key must be a plain value, not a dict",
    "duplicate-table": ("two tables for 2 trainer GPUs: give each table once: write the two as one table, naming both "
                        "tables' models, each row a cell for every model (a length one table lacks: measure it for "
                        "the other's models, or leave that row out)"),
    "bad-syntax": "at the end of the file: malformed YAML",  # an unclosed bracket: line 6 would not exist
    "python-tag": "line 2: malformed YAML: could not determine a constructor for the tag",
    "empty": "expected a mapping at the top level, got an empty file",
    "top-level-list": "expected a mapping at the top level, got a list",
}


def test_every_fixture_has_an_expected_rejection():
    assert sorted(path.stem for path in MALFORMED.glob("*.yaml")) == sorted(REJECTIONS)


@pytest.mark.parametrize("name", sorted(REJECTIONS))
def test_a_broken_table_file_is_rejected_naming_file_table_and_row(name: str):
    path = MALFORMED / f"{name}.yaml"
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    message = str(caught.value)
    assert message.startswith(f"{path}: {REJECTIONS[name]}")
    assert "\n" not in message


@pytest.mark.parametrize(("length", "said"), [
    ("32k", "must be a whole number, got '32k' (tables are in tokens: write 32768)"),
    ("99999k", ("must be a whole number, got '99999k' (tables are in tokens, and as a number it must be at most "
                "16777216)")),
    ("32kb", "must be a whole number, got '32kb'"),  # not told 32k, which a job's length takes and a table's does not
])
def test_a_table_length_in_thousands_is_refused_saying_it_in_tokens(tmp_path: Path, length: str, said: str):
    # --len and cluster jobs take 32k; a table's row is a measured length, in tokens, as the source gives it.
    path = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    path.write_text(path.read_text(encoding="utf-8").replace("max_model_len: 8,", f"max_model_len: {length},"),
                    encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    assert str(caught.value) == f"{path}: table gpus=8, row max_model_len={length}, max_model_len: {said}"


@pytest.mark.parametrize("cell", ["-", "-   # OOM"])
def test_a_bare_dash_cell_in_block_style_is_told_to_quote_it(tmp_path: Path, cell: str):
    # YAML reads a '-' alone after a key in block style as a list's item: the reader's words were "block sequence
    # entries are not allowed in this context", which says nothing of the cell or its fix.
    path = tmp_path / "cells.yaml"
    path.write_text("gpu: H100-80GB\nsource: mine\ntables:\n  - gpus: 8\n    section: s\n    models: [Qwen3-8B]\n"
                    f"    rows:\n      - max_model_len: 8192\n        cells:\n          Qwen3-8B: {cell}\n",
                    encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    assert str(caught.value) == (f"{path}: line 10: a bare '-' after a key, which YAML reads as a list's item there: "
                                 'quote it, "-"')


@pytest.mark.parametrize(("text", "got"), [
    ("42\n", "a number"), ("0.5\n", "a number"), ("true\n", "true or false"), ("- 8B\n", "a list"),
    ("2024-01-01\n", "a date"), ("gpus,model,cell\n", "text, not YAML's 'key: value' lines"),
])
def test_a_file_that_is_not_a_mapping_says_what_it_holds_in_yaml_words(tmp_path: Path, text: str, got: str):
    # Python's own type names were shown: "got a int", "got a bool", "got a float".
    path = tmp_path / "cells.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    assert str(caught.value) == (f"{path}: expected a mapping at the top level, got {got} (fields: gpu, memory_gb, "
                                 "memory_mib, aliases, source, tables, rocm, workstation_host_ram_gib, interconnect, "
                                 "interconnect_source, compute_capability)")


def test_a_missing_file_is_a_table_error(tmp_path: Path):
    with pytest.raises(TableError, match="cannot read"):
        load_gpu_type(tmp_path / "absent.yaml", MODELS)


@pytest.mark.parametrize(("old", "new", "message"), [
    ("aliases: [8B]", "aliases: [4B]", "the name '4b' is given to two models"),
    ("hidden_size: 2560", "hidden_size: -2560", r"model Qwen3-4B, hidden_size: must be above 0"),
    # tables_of naming another shape, no such model, or a model that is itself stood for: its cells are not
    # this model's; and no tables_of where two models of one shape would both stand for themselves.
    *(("tables_of: Qwen3-8B,", f"tables_of: {stands_for},",
       (rf"Qwen3-8B-Base: tables_of names '{stands_for}', which is not another model of this file of the same shape "
        r"\(one that names no tables_of itself\)")) for stands_for in ("Qwen3-4B", "Qwen3-9B", "Qwen3-8B-Base")),
    ("tables_of: Qwen3-8B, ", "", r"Qwen3-8B-Base has the shape of Qwen3-8B: give it tables_of: Qwen3-8B"),
])
def test_a_broken_models_file_is_refused_in_one_line(tmp_path: Path, old: str, new: str, message: str):
    text = (shipped_tables_directory() / "models.yaml").read_text(encoding="utf-8")
    assert old in text
    (tmp_path / "models.yaml").write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(TableError, match=message) as raised:
        load_models(tmp_path / "models.yaml")
    assert "\n" not in str(raised.value)


QUOTED = " (quoted, YAML reads it as text: write it without quotes)"
"""The hint of a value that YAML reads as text only because of its quotes."""


@pytest.mark.parametrize(("written", "said"), [
    ('"yes"', f"got 'yes'{QUOTED}"), ('"true"', f"got 'true'{QUOTED}"), ("'False'", f"got 'False'{QUOTED}"),
    ('"maybe"', "got 'maybe'"), ("2", "got 2"),
    ("1e3", "got '1e3'"),  # exponent notation, text to YAML 1.1: no number to write for a flag
])
def test_a_quoted_rocm_is_refused_as_every_flag_is(cli, tmp_path: Path, written: str, said: str):
    # rocm was a plain bool, which took "yes" and "true" in quotes where env, offload or tied_embeddings refuse them.
    cells = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    cells.write_text(f"rocm: {written}\n" + cells.read_text(encoding="utf-8"), encoding="utf-8")
    message = f"{cells}: rocm: must be true or false, {said}"
    with pytest.raises(TableError) as raised:
        load_gpu_type(cells, MODELS)
    assert str(raised.value) == message
    assert cli("--model", "8B", "--gpu", "h100", "--len", "8k", "--cells", str(cells)) == (  # a cells file: its line
        2, "", f"solve: error: --cells {cells}: line 1: rocm: must be true or false, {said}\n")


@pytest.mark.parametrize(("written", "rocm"), [("true", True), ("yes", True), ("True", True), ("false", False)])
def test_rocm_takes_yaml_booleans_unquoted(tmp_path: Path, written: str, rocm: bool):
    cells = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    cells.write_text(f"rocm: {written}\n" + cells.read_text(encoding="utf-8"), encoding="utf-8")
    assert load_gpu_type(cells, MODELS).rocm is rocm


@pytest.mark.parametrize(("old", "new", "said"), [
    ("{name: Qwen3-0.6B, ", '{name: Qwen3-0.6B, logit_softcapping: "true", ',
     f"logit_softcapping: must be true or false, got 'true'{QUOTED}"),
    ("{name: Qwen3-0.6B, ", "{name: Qwen3-0.6B, logit_softcapping: 1, ",
     "logit_softcapping: must be true or false, got 1"),
    ("tied_embeddings: true, parameters_b: 0.596, native_context: 40960",
     'tied_embeddings: "on", parameters_b: 0.596, native_context: 40960',
     f"tied_embeddings: must be true or false, got 'on'{QUOTED}"),
])
def test_a_quoted_model_flag_is_refused_saying_to_drop_the_quotes(tmp_path: Path, old: str, new: str, said: str):
    # logit_softcapping was a plain bool, which took "true" in quotes; every flag now says why a quoted one is text.
    text = (shipped_tables_directory() / "models.yaml").read_text(encoding="utf-8")
    assert text.count(old) == 1
    (tmp_path / "models.yaml").write_text(text.replace(old, new), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_models(tmp_path / "models.yaml")
    assert str(raised.value) == f"{tmp_path / 'models.yaml'}: model Qwen3-0.6B, {said}"


@pytest.mark.parametrize(("written", "digits"), [("1e6", "1000000"), ("9.5e6", "9500000"), ("1e7", "1.0e+7")])
def test_a_whole_fraction_field_in_exponent_notation_is_told_its_digits_up_to_seven(
        tmp_path: Path, written: str, digits: str):
    # A field that takes fractions (parameters_b, unbounded above) is told a whole value's digits up to 7 of them
    # (PLAIN_DIGITS), past that the exponent form YAML reads; either written so loads.
    text = (shipped_tables_directory() / "models.yaml").read_text(encoding="utf-8")
    old = "parameters_b: 0.596, native_context: 40960"
    assert text.count(old) == 1
    path = tmp_path / "models.yaml"
    path.write_text(text.replace(old, f"parameters_b: {written}, native_context: 40960"), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_models(path)
    assert str(raised.value) == (f"{path}: model Qwen3-0.6B, parameters_b: must be a number, got '{written}' (YAML "
                                 f"reads it as text: write {digits})")
    path.write_text(text.replace(old, f"parameters_b: {digits}, native_context: 40960"), encoding="utf-8")
    assert next(model for model in load_models(path) if model.name == "Qwen3-0.6B").parameters_b == float(digits)


def test_a_catalog_directory_without_gpu_tables_is_rejected(tmp_path: Path):
    shutil.copy(shipped_tables_directory() / "models.yaml", tmp_path)
    shutil.copy(shipped_tables_directory() / "gpus.yaml", tmp_path)
    (tmp_path / "feasibility").mkdir()
    with pytest.raises(TableError, match="no GPU table files"):
        load_catalog(tmp_path)


A100_CLASH = ("'a100' is given to two GPU types, A100-80GB (feasibility/a100-80gb.yaml) and H20-96GB "
              "(feasibility/h20-96gb.yaml): give it to one")
"""The refusal of the H20's table file claiming the A100's alias, after ``the name``."""


@pytest.mark.parametrize(("aliases", "clash"), [  # names are matched in any case: so are their clashes
    ("a100", A100_CLASH),
    ("A100", A100_CLASH),
    ("h20, a100-40G", ("'a100-40g' is given to two GPU types, A100-40GB (gpus.yaml) and H20-96GB "
                       "(feasibility/h20-96gb.yaml): give it to one")),
    ("h20, H20-96G", ("'h20-96g' is given twice to H20-96GB (in gpus.yaml and feasibility/h20-96gb.yaml; names match "
                      "in any case): give it once")),
])
def test_two_gpu_files_may_not_claim_the_same_alias(tmp_path: Path, aliases: str, clash: str):
    # Before: "the name 'a100' is given to two GPU types", naming neither, nor the files to mend.
    shutil.copytree(shipped_tables_directory(), tmp_path, dirs_exist_ok=True)
    h20 = tmp_path / "feasibility" / "h20-96gb.yaml"
    h20.write_text(h20.read_text(encoding="utf-8").replace("aliases: [h20]", f"aliases: [{aliases}]"),
                   encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_catalog(tmp_path)
    assert str(raised.value) == f"{tmp_path}: the name {clash}"


TRINITY_RELEASE_SECTIONS = {"algorithms": ["ppo"], "sections": {"": ["a"]}, "open": {}, "null": []}
"""The least a release of ``tables/trinity-fields.yaml`` gives."""


def test_trinity_fields_of_a_release_the_code_does_not_know_are_refused(tmp_path: Path):
    # Before: a 0.6.1 copied from 0.6.0 was read, and --check used it, while --trinity-version 0.6.1 was refused.
    path = tmp_path / "trinity-fields.yaml"
    path.write_text(yaml.safe_dump({"releases": {"0.6.0": TRINITY_RELEASE_SECTIONS,
                                                 "0.6.1": TRINITY_RELEASE_SECTIONS}}), encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_validated(TrinityFields, path)
    assert str(raised.value) == (
        f"{path}: releases: '0.6.1' is a release whose rules rft-solver does not know (it knows 0.5.0, 0.5.1, 0.5.2 "
        "and 0.6.0): add it to KNOWN_TRINITY_RELEASES in solver/tables/bounds.py with its rules first (docs/tables.md, "
        "A new Trinity release), or remove it")


def test_the_shipped_trinity_fields_give_every_release_the_code_knows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A release left out would leave --check --trinity-version of its minor version no release to judge by.
    (tmp_path / "trinity-fields.yaml").write_text(yaml.safe_dump(
        {"releases": {"0.5.0": TRINITY_RELEASE_SECTIONS, "0.5.2": TRINITY_RELEASE_SECTIONS}}), encoding="utf-8")
    monkeypatch.setattr(solver.tables.loaders, "shipped_tables_directory", lambda: tmp_path)
    with pytest.raises(TableError) as raised:
        load_trinity_fields.__wrapped__()  # not cached: the shipped table stays read as it was
    assert str(raised.value) == (f"{tmp_path / 'trinity-fields.yaml'}: releases: 0.5.1 and 0.6.0 missing, whose rules "
                                 "rft-solver knows: add them (benchmarks/trinity_fields.py reads a release's wheel)")


def test_loaded_tables_are_immutable():
    catalog = load_catalog()
    with pytest.raises(pydantic.ValidationError, match="frozen"):
        catalog.documented_gpu_types[0].tables[0].rows[0].max_model_len = 1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("4B", "Qwen3-4B"), ("4b", "Qwen3-4B"), ("qwen3-4b", "Qwen3-4B"), ("Qwen3-4B", "Qwen3-4B"), ("0.6b", "Qwen3-0.6B"),
     ("30b-a3b", "Qwen3-30B-A3B"), (" 14B ", "Qwen3-14B")],
)
def test_model_names_resolve_in_any_case(name: str, canonical: str):
    assert load_catalog().model(name).name == canonical


def test_unknown_names_list_the_accepted_ones_in_one_short_line():
    # Without aliases, and a family's names that take the same variants after its first name, where each is one
    # part after the family's start: RTX-6000-Ada-48GB/4090-24GB/5090-32GB read as one card, so those are whole.
    with pytest.raises(QueryError) as raised:
        load_catalog().gpu("a30")
    assert str(raised.value) == (
        "unknown GPU 'a30'; accepted: A100-40GB/80GB, A800-80GB, H20-96GB, H100-80GB, H100-NVL-94GB, H800-80GB, "
        "H200-141GB, GH200-96GB/144GB, L40S-48GB, L40-48GB, L20-48GB, A40-48GB, RTX-A6000-48GB, "
        "RTX-6000-Ada-48GB, A10-24GB, L4-24GB, RTX-4090-24GB, RTX-5090-32GB, B200, B300, MI300X, MI325X; short "
        "forms such as l4 for L4-24GB too")
    with pytest.raises(QueryError) as raised:
        load_catalog().model("Qwen4-8B")
    assert str(raised.value) == (
        "unknown model 'Qwen4-8B'; accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), "
        "Qwen3-4B(-Base|-Instruct-2507|-Thinking-2507), Qwen3-32B, Qwen3-30B-A3B(-Base|-Instruct-2507|-Thinking-2507), "
        "Qwen2.5-7B/14B/32B(-Instruct), Llama-3.1-8B/70B; short forms such as 4B for Qwen3-4B too")


def test_model_shapes_are_those_of_the_reference():
    shapes = {
        model.name: (model.hidden_size, model.num_layers, model.num_attention_heads, model.num_key_value_heads,
                     model.intermediate_size, model.parameters_b)
        for model in load_catalog().models
    }
    assert shapes["Qwen3-0.6B"] == (1024, 28, 16, 8, 3072, 0.596)
    assert shapes["Qwen3-4B"] == (2560, 36, 32, 8, 9728, 4.022)
    assert shapes["Qwen3-14B"] == (5120, 40, 40, 8, 17408, 14.768)
    assert shapes["Qwen3-32B"] == (5120, 64, 64, 8, 25600, 32.762)
    moe = load_catalog().model("30B-A3B").moe
    assert moe is not None and (moe.experts, moe.active_experts, moe.moe_intermediate_size) == (128, 8, 768)
    qwen3 = [model for model in load_catalog().models if model.name.startswith("Qwen3")]
    assert all(model.native_context == (32768 if model.name.endswith("-Base") else
                                        262144 if model.name.endswith("-2507") else 40960)
               and model.vocab_size == 151936 and model.head_size == 128 for model in qwen3)
    # Each base model has its release's shape, whose table cells stand for it; the releases stand for none.
    bases = {model.name: model for model in qwen3 if model.name.endswith("-Base")}
    assert {name: model.tables_of for name, model in bases.items()} == {
        "Qwen3-0.6B-Base": "Qwen3-0.6B", "Qwen3-1.7B-Base": "Qwen3-1.7B", "Qwen3-4B-Base": "Qwen3-4B",
        "Qwen3-8B-Base": "Qwen3-8B", "Qwen3-14B-Base": "Qwen3-14B", "Qwen3-30B-A3B-Base": "Qwen3-30B-A3B"}
    assert all(model.shape == load_catalog().model(name.removesuffix("-Base")).shape for name, model in bases.items())
    # So has each July 2025 update (native context 262144: no YaRN below it).
    updates = {model.name: model for model in qwen3 if model.name.endswith("-2507")}
    assert {name: model.tables_of for name, model in updates.items()} == {
        "Qwen3-4B-Instruct-2507": "Qwen3-4B", "Qwen3-4B-Thinking-2507": "Qwen3-4B",
        "Qwen3-30B-A3B-Instruct-2507": "Qwen3-30B-A3B", "Qwen3-30B-A3B-Thinking-2507": "Qwen3-30B-A3B"}
    assert all(model.shape == load_catalog().model(name.split("-Instruct")[0].split("-Thinking")[0]).shape
               and model.yarn_factor(262144) is None for name, model in updates.items())
    assert all(model.tables_of is None for model in qwen3 if model.name not in bases | updates.keys())
    assert load_catalog().model("qwen2.5-7b-instruct").head_size == 128  # 3584 / 28
    # Qwen2.5 base and Instruct models share their shapes; their configs give different native contexts.
    for size in ("7B", "14B", "32B"):
        base, instruct = (load_catalog().model(f"Qwen/Qwen2.5-{size}{kind}") for kind in ("", "-Instruct"))
        assert base.shape == instruct.shape and (base.native_context, instruct.native_context) == (131072, 32768)
        assert (base.yarn_factor(65536), instruct.yarn_factor(65536)) == (None, 2.0)


def test_escalation_order_is_sorted_by_its_key():
    keys = [setting.escalation_key for setting in ESCALATION_ORDER]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert [setting.label for setting in ESCALATION_ORDER] == [
        "vanilla", "Env", "SP=2", "Env + SP=2", "SP=4", "Env + SP=4",
        "Env + Offload", "Env + Offload + SP=2", "Env + Offload + SP=4",
    ]
    never_tried = Setting(offload=True, sp=4)  # Offload without Env: after every setting the source tries
    assert never_tried.escalation_key > max(keys) and Setting(offload=True).escalation_key == never_tried.escalation_key


@given(env=st.booleans(), offload=st.booleans(), sp=st.integers(min_value=1, max_value=64))
def test_a_setting_label_parses_back_to_the_same_setting(env: bool, offload: bool, sp: int):
    setting = Setting(env=env, offload=offload, sp=sp)
    assert Setting.parse(setting.label) == setting


@pytest.mark.parametrize("text", ["", "env", "Vanilla", "Turbo", "SP=1", "SP=", "SP=two", "Env +", "Env + Env",
                                  "Offload + Env", "SP=2 + SP=4"])
def test_non_canonical_cell_texts_are_rejected(text: str):
    # The parser's own messages, not a ValueError of int("two") that any code would raise.
    with pytest.raises(ValueError, match=r"unknown setting|an SP degree is at least 2|appears twice|not in the source's form"):
        Setting.parse(text)


@pytest.mark.parametrize(("text", "message"), [
    ("SP=1", "'SP=1': an SP degree is at least 2 (no SP is written as vanilla)"),
    ("Env + SP=1", "'SP=1' in 'Env + SP=1': an SP degree is at least 2 (no SP is written as vanilla)"),
    ("Env + Env", "'Env' appears twice in 'Env + Env'"),
    ("SP=2 + SP=4", "'SP=4' appears twice in 'SP=2 + SP=4'"),
    ("Offload + Env", "setting 'Offload + Env' is not in the source's form; write 'Env + Offload'"),
    # another case, as a user types it: the source's form is named
    ("env + sp=8", "setting 'env + sp=8' is not in the source's form; write 'Env + SP=8'"),
    ("Vanilla", "setting 'Vanilla' is not in the source's form; write 'vanilla'"),
    ("sp=2 + ENV + offload",
     "setting 'sp=2 + ENV + offload' is not in the source's form; write 'Env + Offload + SP=2'"),
    # an SP degree without '=' and solve map's short labels were each an unknown setting, with no form named
    ("Env + SP4", "setting 'Env + SP4' is not in the source's form; write 'Env + SP=4'"),
    ("SP = 2", "setting 'SP = 2' is not in the source's form; write 'SP=2'"),
    ("E+O+SP4", "setting 'E+O+SP4' is not in the source's form; write 'Env + Offload + SP=4'"),
    ("van", "setting 'van' is not in the source's form; write 'vanilla'"),
    ("SP0", "'SP0': an SP degree is at least 2 (no SP is written as vanilla)"),
])
def test_a_non_canonical_cell_text_is_rejected_saying_what_is_wrong(text: str, message: str):
    # SP=1 and a part given twice have messages of their own, not only that of a text out of the source's form.
    with pytest.raises(ValueError) as raised:
        Setting.parse(text)
    assert str(raised.value) == message


def test_dash_means_nothing_trains():
    assert Setting.parse("-") is None


def test_the_shipped_tables_agree_with_the_semantics():
    assert load_catalog().contradictions() == []


def test_contradictions_are_reported_not_fixed(tmp_path: Path):
    shutil.copytree(shipped_tables_directory(), tmp_path, dirs_exist_ok=True)
    a100 = tmp_path / "feasibility" / "a100-80gb.yaml"
    lines = a100.read_text(encoding="utf-8").splitlines()
    # The last 51200 row is the 6-GPU table's; Qwen3-14B is '-' there in the source. Pretend vanilla trained.
    row = max(i for i, line in enumerate(lines) if "max_model_len: 51200," in line)
    lines[row] = lines[row].replace('Qwen3-14B: "-"', "Qwen3-14B: vanilla")
    a100.write_text("\n".join(lines) + "\n", encoding="utf-8")
    catalog = load_catalog(tmp_path)
    found = catalog.contradictions()
    assert ("A100-80GB, 6 GPUs, Qwen3-14B: Env + Offload + SP=2 at 40960 but vanilla trains at the longer 51200 "
            "(memory only grows with the length)") in found
    assert catalog.gpu("a100").tables[3].rows[10].setting("Qwen3-14B") == Setting()  # kept as written
    # New to the edited tables, not to a catalogue that has them already.
    assert load_catalog().new_contradictions(catalog, "A100-80GB") == found
    assert catalog.new_contradictions(catalog, "A100-80GB") == []


def test_a_cell_outside_the_order_contradicts_no_cell_for_the_settings_before_it(tmp_path: Path):
    # Offload without Env says only that it trained (the planner's failed_settings: none), yet the check read it as
    # saying Env + SP=8 ran out of memory at 49152 and on 4 GPUs' Env + Offload + SP=4 at 65536: a valid cells file
    # was refused for planning and calibration. A `-` or an in-order cell on the same rows is still a contradiction.
    def contradictions(cells_49152: str, cells_65536: str) -> list[str]:
        cells = tmp_path / "cells.yaml"
        cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: s\ntables:\n"
                         "  - gpus: 4\n    section: s\n    models: [14B]\n    rows:\n"
                         "      - {max_model_len: 65536, cells: {14B: Env + Offload + SP=4}}\n"
                         "  - gpus: 8\n    section: s\n    models: [14B]\n    rows:\n"
                         f"      - {{max_model_len: 49152, cells: {{14B: {cells_49152}}}}}\n"
                         f"      - {{max_model_len: 65536, cells: {{14B: {cells_65536}}}}}\n", encoding="utf-8")
        catalog = load_catalog().with_cells(cells, keep_contradictions=True)
        return catalog.with_same_memory("H100-80GB").contradictions()

    assert contradictions("Offload + SP=8", "Env + SP=8") == []
    assert contradictions("SP=8", "Offload + SP=8") == []
    where = "H100-80GB, 8 GPUs, Qwen3-14B"
    assert contradictions("Env + Offload + SP=8", "Env + SP=8") == [
        ("H100-80GB, Qwen3-14B at 49152: Env + Offload + SP=4 trains on 4 GPUs (at 65536, the row 49152 falls to) but "
         "8 GPUs need Env + Offload + SP=8 (more GPUs only shard the states further)"),
        (f"{where}: Env + Offload + SP=8 at 49152 but Env + SP=8 trains at the longer 65536 (memory only grows with "
         "the length)")]
    assert contradictions("SP=8", '"-"') == [
        ("H100-80GB, Qwen3-14B at 65536: Env + Offload + SP=4 trains on 4 GPUs but 8 GPUs need - (more GPUs only "
         "shard the states further)")]


def test_a_cells_files_models_may_be_named_by_their_hugging_face_id_as_with_model(tmp_path: Path):
    # --model Qwen/Qwen3-8B plans Qwen3-8B; the same id in a cells file's models was an unknown model, without a guess.
    path = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    path.write_text(path.read_text(encoding="utf-8").replace("[8B]", "[Qwen/Qwen3-8B]"),
                    encoding="utf-8")
    assert load_gpu_type(path, MODELS).tables[0].models == ("Qwen3-8B",)


def _one_column_cells_file(path: Path, rows: int, cell: str = "Env + Offload + SP=8") -> Path:
    """A cells file of one 8-GPU H100 table, Qwen3-8B's column alone, `rows` rows long, every cell `cell`."""
    lines = ["gpu: H100-80GB", "memory_gb: 80", "source: generated", "tables:", "  - gpus: 8", "    section: s",
             "    models: [8B]", "    rows:"]
    lines += [f"      - {{max_model_len: {8 * row}, cells: {{8B: {cell}}}}}" for row in range(1, rows + 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("written", ["num_gpus", "gpu_count", "n_gpus"])
def test_a_cells_tables_gpu_count_by_another_name_is_told_gpus(tmp_path: Path, written: str):
    # As a row's max_len is told max_model_len: the same guess for every field a file names (a pool's num_gpus is
    # its gpus_per_node), and no second problem for the gpus it lacks.
    path = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    path.write_text(path.read_text(encoding="utf-8").replace("  - gpus: 8", f"  - {written}: 8"), encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    assert str(caught.value) == (f"{path}: tables item 1: unknown field {written!r} (did you mean gpus? fields: gpus, "
                                 "section, source, models, rows)")


def test_a_cells_rows_other_length_name_beside_max_model_len_is_told_no_field_it_has(tmp_path: Path):
    # wording88: seq_len in a row that has max_model_len was asked "did you mean max_model_len?"; alone, it still is.
    path = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    text = path.read_text(encoding="utf-8")
    for row, said in (("{max_model_len: 8, seq_len: 8,", "row max_model_len=8: unknown field 'seq_len' ("),
                      ("{seq_len: 8,", "rows item 1: unknown field 'seq_len' (did you mean max_model_len? ")):
        path.write_text(text.replace("{max_model_len: 8,", row), encoding="utf-8")
        with pytest.raises(TableError) as caught:
            load_gpu_type(path, MODELS)
        assert str(caught.value) == f"{path}: table gpus=8, {said}fields: max_model_len, cells)"


@pytest.mark.parametrize(("field", "written", "said"), [
    ("memory_gb", "80GB", ("got '80GB' (GB as sold, as a number: 80 for 80 GB; nvidia-smi's total in MiB goes in "
                           "memory_mib)")),
    ("memory_gb", "81559MiB", "got '81559MiB' (MiB, nvidia-smi's total, go in memory_mib: memory_mib: 81559)"),
    ("memory_mib", "81559 MiB", "got '81559 MiB' (nvidia-smi's total in MiB, as a number: 81559)"),
])
def test_a_cells_files_memory_with_its_unit_is_told_the_number_as_a_pools_is(tmp_path: Path, field: str,
                                                                             written: str, said: str):
    # A pool's gpu_memory_gb: 80GB was told the number; a cells file's memory_gb: 80GB got no hint.
    path = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    kept = "memory_gb: 80\n" if field == "memory_mib" else ""
    path.write_text(path.read_text(encoding="utf-8").replace("memory_gb: 80", f"{kept}{field}: {written}"),
                    encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    assert str(caught.value) == f"{path}: {field}: must be a whole number, {said}"


@pytest.mark.parametrize(("named", "guess"), [
    ("Qwen3-14", " (did you mean Qwen3-14B?)"),  # a letter short, as --model guesses
    ("qwen-3-8b", " (did you mean Qwen3-8B?)"),  # other hyphens
    ("Qwen3-41B", ""),  # one slip from 14B but another number: no guess
])
def test_a_misspelt_model_in_a_cells_file_is_guessed_as_on_the_command_line(tmp_path: Path, named: str, guess: str):
    path = _one_column_cells_file(tmp_path / "cells.yaml", 1)
    path.write_text(path.read_text(encoding="utf-8").replace("8B", named), encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    assert str(caught.value).startswith(f"{path}: table gpus=8: unknown model {named!r} in the table's models{guess} "
                                        "(known: Qwen3-0.6B, ")


def test_a_long_column_that_agrees_is_checked_for_contradictions_in_linear_work(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):
    # Each cell was compared with every longer one: 2000 rows took 2 million comparisons, and a generated cells
    # file of 200000 rows (13 MB, within the size limit) kept `solve --cells` busy for hours.
    cells = _one_column_cells_file(tmp_path / "long.yaml", 2000)
    looked_up = []
    key = Setting.escalation_key

    def counted_key(setting: Setting) -> tuple[int, int, int]:
        looked_up.append(setting)
        return key.fget(setting)  # type: ignore[attr-defined]

    monkeypatch.setattr(Setting, "escalation_key", property(counted_key))
    catalog = load_catalog().with_cells(cells)
    assert catalog.with_same_memory("H100-80GB").contradictions() == []
    assert len(looked_up) < 4 * 2 * 2000  # a few look-ups per cell, twice over (with_cells, then the check above)


def test_a_contradiction_in_a_column_is_found_whichever_longer_cell_undercuts_it(tmp_path: Path):
    # The check skips a cell no longer cell undercuts: a '-' or a costlier setting before a cheaper one is still found,
    # once for each longer cell that undercuts it.
    cells = tmp_path / "cells.yaml"
    cells.write_text("gpu: H100-80GB\nmemory_gb: 80\nsource: s\ntables:\n  - gpus: 8\n    section: s\n"
                     "    models: [8B]\n    rows:\n"
                     "      - {max_model_len: 8192, cells: {8B: Env}}\n"
                     "      - {max_model_len: 16384, cells: {8B: \"-\"}}\n"
                     "      - {max_model_len: 32768, cells: {8B: Env + SP=4}}\n"
                     "      - {max_model_len: 65536, cells: {8B: SP=2}}\n"
                     "      - {max_model_len: 131072, cells: {8B: Env + SP=8}}\n", encoding="utf-8")
    found = load_catalog().with_cells(cells, keep_contradictions=True).with_same_memory("H100-80GB").contradictions()
    where, grows = "H100-80GB, 8 GPUs, Qwen3-8B", "(memory only grows with the length)"
    assert found == [f"{where}: - at 16384 but Env + SP=4 trains at the longer 32768 {grows}",
                     f"{where}: - at 16384 but SP=2 trains at the longer 65536 {grows}",
                     f"{where}: - at 16384 but Env + SP=8 trains at the longer 131072 {grows}",
                     f"{where}: Env + SP=4 at 32768 but SP=2 trains at the longer 65536 {grows}"]


def test_a_cells_file_of_more_cells_than_a_gpu_type_may_have_is_refused_in_one_line(cli, tmp_path: Path):
    # A generated file of 200000 rows passed the 16 MB limit, then planned or calibrated for hours; each cell is a
    # measured run, and calibration on 2048 takes tens of seconds.
    assert len(load_catalog().with_cells(_one_column_cells_file(tmp_path / "most.yaml", 2048)).gpu("h100").tables) == 1
    cells = _one_column_cells_file(tmp_path / "more.yaml", 2049)
    message = (f"{cells}: 2049 cells, more than the 2048 a GPU type's tables may have (each is a measured run: give the "
               "lengths you train at)")
    with pytest.raises(TableError) as raised:
        load_catalog().with_cells(cells)
    assert str(raised.value) == message
    for prog, command in (("solve calibrate", ("calibrate",)), ("solve tables", ("tables",)),
                          ("solve", ("--model", "8B", "--gpu", "h100", "--len", "8k"))):
        assert cli(*command, "--cells", str(cells)) == (2, "", f"{prog}: error: --cells {message}\n")


def test_solve_tables_check(cli, edited_a100_tables, monkeypatch: pytest.MonkeyPatch):
    status, out, err = cli("tables", "--check")
    assert (status, out, err) == (0, "0 contradictions in 560 cells\n", "")
    assert cli("tables", "--check", "--json") == (0, "[]\n", "")
    # A contradiction is named, and the exit status is 1 (as for a question without a plan).
    edited = edited_a100_tables(lambda text: text.replace('{max_model_len: 16384, cells: {Qwen3-0.6B: vanilla',
                                                          '{max_model_len: 16384, cells: {Qwen3-0.6B: Env', 1))
    monkeypatch.setattr("solver.tables.load_catalog", lambda: edited)  # as the commands read it
    found = ("A100-80GB, 1 GPU, Qwen3-0.6B: Env at 16384 but vanilla trains at the longer 20480 (memory only grows "
             "with the length)")
    assert cli("tables", "--check") == (1, f"solve tables: warning: {found}\n1 contradiction in 560 cells\n", "")
    assert cli("tables", "--check", "--json") == (1, json.dumps([found], indent=2) + "\n", "")


@pytest.mark.parametrize(("name", "canonical"), [
    ("a100", "A100-80GB"), ("A100", "A100-80GB"), ("a100-80gb", "A100-80GB"), ("H20", "H20-96GB"),
    ("h20-96GB", "H20-96GB"),
    ("A100 80GB", "A100-80GB"), ("a100_80gb", "A100-80GB"), ("a100-80g", "A100-80GB"), ("h20-96g", "H20-96GB"),
    ("h200-141g", "H200-141GB"), ("rtx4090", "RTX-4090-24GB"), ("RTX 4090 24GB", "RTX-4090-24GB"),
    # spaces around the name (pasted from nvidia-smi), and a run of spaces and underscores, as one hyphen
    (" a100 ", "A100-80GB"), (" NVIDIA A100-SXM4-80GB\t", "A100-80GB"), ("a100 _ 80gb", "A100-80GB"),
    # the GPU types added in session 53, by the names users type and nvidia-smi or amd-smi prints
    ("gh200-96gb", "GH200-96GB"), ("NVIDIA GH200 480GB", "GH200-96GB"), ("NVIDIA GH200 144G HBM3e", "GH200-144GB"),
    ("mi325x", "MI325X"), ("AMD Instinct MI325X", "MI325X"), ("a40", "A40-48GB"), ("NVIDIA A40", "A40-48GB"),
    ("rtx5090", "RTX-5090-32GB"), ("NVIDIA GeForce RTX 5090", "RTX-5090-32GB"), ("rtx-6000-ada", "RTX-6000-Ada-48GB"),
    ("NVIDIA RTX 6000 Ada Generation", "RTX-6000-Ada-48GB"), ("l40", "L40-48GB"), ("L40S", "L40S-48GB"),
    ("b300", "B300"), ("RTX A6000 Ada", "RTX-6000-Ada-48GB"),  # as some clouds list it (was guessed RTX-A6000-48GB)
    # AWS's A10G (g5 instances), an A10 of the same memory and link, by the names users type and nvidia-smi prints
    # (was unknown, with no guess; persona89d)
    ("a10g", "A10-24GB"), ("A10G-24GB", "A10-24GB"), ("NVIDIA A10G", "A10-24GB"),
    # the B200 as many clouds sell it, by its 192 GB (nvidia-smi's 183359 MiB is 192.3 GB), the DGX B200's 180 GB
    # each: the same card (was told it is another card, a GPU type of one's own at 192 GiB, which it cannot hold;
    # persona92d)
    ("b200-192gb", "B200"), ("B200 192GB", "B200"), ("b200-192g", "B200"),
])
def test_gpu_names_match_in_any_case_with_spaces_or_underscores(name: str, canonical: str):
    assert load_catalog().gpu(name).name == canonical


def test_a_gpu_type_without_a_driver_total_counts_its_gb_as_sold_in_bytes_at_most_what_the_others_report():
    # GH200, B300 and MI325X: memory_mib is their GB as sold, 10^9 bytes each, in MiB; every GPU type whose source
    # gives a driver total reports at least that (the A10 the least: 0.937 of its GB taken as GiB, against 0.931).
    catalog = load_catalog()
    estimated = [gpu.name for gpu in catalog.gpu_types if "driver total not at hand" in str(gpu.source)]
    assert estimated == ["GH200-96GB", "GH200-144GB", "B300", "MI325X"]
    for gpu in catalog.gpu_types:
        in_bytes = gpu.memory_gb * 10**9 // 2**20
        assert gpu.memory_mib == in_bytes if gpu.name in estimated else gpu.memory_mib > in_bytes, gpu.name


@pytest.mark.parametrize(("name", "refused"), [
    ("v100", "'v100' is a V100, which has no bf16 (compute capability 7.0;"),
    ("Tesla V100-SXM2-32GB", "'Tesla V100-SXM2-32GB' is a V100, "),  # as nvidia-smi prints it
    ("V100S", "'V100S' is a V100, "), ("Tesla T4", "'Tesla T4' is a T4, which has no bf16 (compute capability 7.5;"),
    ("p40", "'p40' is a P40, "), ("RTX 2080 Ti", "'RTX 2080 Ti' is an RTX-2080-Ti, "),
    ("Quadro RTX 6000", "'Quadro RTX 6000' is a Quadro-RTX-6000, "), ("rtx-8000", "'rtx-8000' is a Quadro-RTX-8000, "),
])
def test_a_gpu_type_without_bf16_is_refused_by_name_even_as_ones_own(name: str, refused: str):
    catalog = load_catalog()
    for attempt in (lambda: catalog.gpu(name),
                    lambda: catalog.with_gpu_types([described_gpu_type(name, 32)])):
        with pytest.raises(RefusedNameError) as raised:
            attempt()
        assert str(raised.value).startswith(refused) and str(raised.value).endswith(
            "bf16 needs 8.0, Ampere or newer), and the verl/FSDP training rft-solver plans runs in bf16: plan for a "
            "GPU type that has it")


def test_a_gpu_type_without_bf16_takes_no_name_of_a_gpu_type(tmp_path: Path):
    tables = tmp_path / "tables"
    shutil.copytree(shipped_tables_directory(), tables)
    gpus = tables / "gpus.yaml"
    gpus.write_text(gpus.read_text().replace("tesla-t4]", "tesla-t4, a10]"))
    with pytest.raises(TableError) as raised:
        load_catalog(tables)
    assert str(raised.value) == (f"{tables}: the name 'a10' is given to two GPU types, A10-24GB (gpus.yaml) and T4 "
                                 "(gpus.yaml's without_bf16): give it to one")


@pytest.mark.parametrize(("capability", "message"), [
    ('"8.0"', ("without_bf16 T4, compute_capability: '8.0' is no compute capability below 8.0 (such as 7.5), "
               "which bf16 needs")),  # the refusal would say 8.0 lacks what 8.0 has
    ('"7"', "without_bf16 T4, compute_capability: '7' is no compute capability below 8.0"),
])
def test_a_gpu_type_without_bf16_has_a_compute_capability_below_ampere(tmp_path: Path, capability: str,
                                                                       message: str):
    tables = tmp_path / "tables"
    shutil.copytree(shipped_tables_directory(), tables)
    gpus = tables / "gpus.yaml"
    gpus.write_text(gpus.read_text().replace('{name: T4, compute_capability: "7.5"',
                                             f"{{name: T4, compute_capability: {capability}"))
    with pytest.raises(TableError) as raised:
        load_catalog(tables)
    assert str(raised.value).startswith(f"{gpus}: {message}")


def test_names_match_in_any_case_as_unicode_folds_it():
    # casefold, not lower: a cells file's GPU type 'Straße-48GB' is the one 'STRASSE 48GB' names.
    assert normalise("Straße-48GB") == normalise("STRASSE 48GB") == "strasse-48gb"


@pytest.mark.parametrize(("name", "form"), [
    ("NVIDIA A100-PCIE-40GB", "a100-40gb"), ("NVIDIA H100 80GB HBM3", "h100-80gb"), ("AMD Instinct MI300X", "mi300x"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    # the vendor only at the start, and a form factor or memory only as a word of its own: a name keeps them elsewhere
    ("MyAMD-64GB", "myamd-64gb"), ("Card-NVIDIA-64GB", "card-nvidia-64gb"), ("A100-PCIEX", "a100-pciex"),
    ("H100-HBM3Plus", "h100-hbm3plus"),
    # the memory's kind only after its size: without one it may name another card (the H20 of 141GB HBM3e)
    ("NVIDIA GH200 144G HBM3e", "gh200-144g"), ("H20 HBM3e", "h20-hbm3e"),
])
def test_the_smi_form_of_a_name_drops_only_the_words_smi_adds(name: str, form: str):
    assert smi_name_form(name) == form


def test_the_first_repeated_item_is_the_first_of_those_that_repeat():
    assert first_repeated(["a", "b", "a", "b"]) == "a"
    assert first_repeated(["a", "b", "c"]) is None


def test_counted_takes_one_number_or_several():
    assert [counted(1, "GPU"), counted(4, "GPU"), counted([1], "GPU"), counted([4, 1], "GPU"), counted([1, 2], "GPU")
            ] == ["1 GPU", "4 GPUs", "1 GPU", "4, 1 GPUs", "1, 2 GPUs"]


def test_a_model_folder_is_read_through_its_config_json():
    folder = Path(__file__).parent / "data" / "model-config"
    assert load_model_config(folder) == load_model_config(folder / "config.json")


def test_an_unknown_models_error_lists_every_variant_under_its_shortest_name(tmp_path: Path):
    # Checkpoints named Qwen3-8B-Base-sft (of Qwen3-8B's shape) and Qwen3-8B-Chat: both listed under
    # Qwen3-8B, the first under it rather than under Qwen3-8B-Base.
    catalog = load_catalog()
    for name in ("Qwen3-8B-Base-sft", "Qwen3-8B-Chat"):
        catalog = catalog.with_model(load_model_config(qwen3_8b_checkpoint(tmp_path / name)))
    with pytest.raises(QueryError) as raised:
        catalog.model("5B")
    assert "Qwen3-0.6B/1.7B/14B(-Base), Qwen3-4B(-Base|-Instruct-2507|-Thinking-2507), " \
           "Qwen3-8B(-Base|-Base-sft|-Chat), Qwen3-32B, " in str(raised.value)


@pytest.mark.parametrize(("name", "guess"), [
    ("Qwen3-8B-Instruct", " (did you mean Qwen3-8B?)"),  # a name that extends a known one
    ("30B", " (did you mean Qwen3-30B-A3B?)"),  # the start of one known name (and of its base model's)
    ("70B", " (did you mean Llama-3.1-70B?)"),  # the last part of one known name
    ("72B", ""),  # the last part of none
    ("14B-Instruct", " (did you mean Qwen2.5-14B-Instruct?)"),  # the last parts of one, before Qwen3-14B's extension
    ("Qwen3-1", ""),  # the start of Qwen3-1.7B and Qwen3-14B: no guess
    ("Qwen3", ""),  # the start of several: no guess
    ("Meta/Qwen3-5B", ""),  # one character from Qwen3-8B, but another model: no guess
    ("Qwen3-88B", " (did you mean Qwen3-8B?)"),  # a keystroke doubled
    ("Qwen3-8BB", " (did you mean Qwen3-8B?)"),  # the last keystroke doubled
    ("Hermes-3-Llama-3.1-8B", " (did you mean Llama-3.1-8B?)"),  # one after a prefix: a fine-tune's name
    ("qwen-3-8b", " (did you mean Qwen3-8B?)"),  # other hyphens
    ("qwen-2.5-7b", " (did you mean Qwen2.5-7B?)"),
    ("my-org-Qwen3-14B", " (did you mean Qwen3-14B?)"),
    ("Distill-8B", ""),  # only a short form after the prefix: no guess
    ("Distill-30B-A3B", ""),  # a short form with a dash in it is a short form too
    ("MyQwen3-14B", ""),  # a known name at the end, but not after a dash: no guess (as 0B)
    ("Qwen3-4B-distilled-from-Qwen3-14B", " (did you mean Qwen3-4B?)"),  # an extension before a prefix
    ("qwen8b", " (did you mean Qwen3-8B?)"),  # the version left out
    ("Qwen/qwen-30b-a3b", " (did you mean Qwen3-30B-A3B?)"),
    ("qwen7b", " (did you mean Qwen2.5-7B?)"),
    ("qwen14b", ""),  # Qwen3-14B and Qwen2.5-14B: no guess
    ("qwen3b", ""),  # not the 8 of Qwen3-8B left out: only the version after the family's name is
    ("llama3-8b", " (did you mean Llama-3.1-8B?)"),  # the version cut to its major one
    ("Meta-Llama-3-8B-Instruct", " (did you mean Llama-3.1-8B?)"),
    ("llama3-70b", " (did you mean Llama-3.1-70B?)"),
    ("Llama-3.3-70B", ""),  # another version: no guess (its config.json is not checked: --model-config)
    ("meta-llama/Llama-3.3-70B-Instruct", ""),
    ("600m", " (did you mean Qwen3-0.6B?)"),  # a size in millions
    ("Qwen3-1700M", " (did you mean Qwen3-1.7B?)"),
    ("Qwen3-8B-FP8", " (did you mean Qwen3-8B?)"),  # an extension: a quantized checkpoint of a known model
    ("qwen3-4b-instruct", " (did you mean Qwen3-4B-Instruct-2507?)"),  # every part of one name, not a base's extension
    ("Qwen3-30B-A3B-Thinking", " (did you mean Qwen3-30B-A3B-Thinking-2507?)"),
    ("qwen3-4b-2507", ""),  # every part of two (Instruct-2507, Thinking-2507): no guess, not Qwen3-4B
    ("Qwen3-30B-A3B-2507", ""),
    ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", ""),  # a distilled model: no name of ours ends it
    ("DeepSeek-R1-Distill-Qwen-14B", ""),  # only a short form after the prefix
])
def test_an_unknown_model_gets_a_guess_only_where_one_name_extends_or_ends_with_the_other(name: str, guess: str):
    with pytest.raises(QueryError) as raised:
        load_catalog().model(name)
    assert str(raised.value).startswith(f"unknown model {name!r}{guess}; accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), ")


OWN_CARD = " (the catalogue's {} has {} GB, not {}: a card of other memory is a GPU type of your own)"
"""What an unknown GPU name that is a catalogue card's with a memory size none of its cards has is told (persona91a)."""


@pytest.mark.parametrize(("name", "guess"), [
    ("a1000", " (did you mean A100-80GB?)"),  # a keystroke doubled: the alias a100
    ("H1000", " (did you mean H100-80GB?)"),
    ("h2000", " (did you mean H200-141GB?)"),
    ("h100-nv", " (did you mean H100-NVL-94GB?)"),  # the start of one name, as for models
    ("hh100", " (did you mean H100-80GB?)"),  # the first keystroke doubled
    ("h100x", ""),  # one keystroke more, not a doubled one: no guess
    ("a10x", ""),  # one character from a100 and from a10: no guess
    ("h", ""),  # the start of several: no guess
    ("SXM-H100", " (did you mean H100-80GB?)"),  # an alias (h100) after a prefix
    # a known name with another memory size: another card, no guess (was H20-96GB), but that it is one's own
    ("h20-141gb", OWN_CARD.format("H20-96GB", 96, "141")),
    ("h100-94gb", OWN_CARD.format("H100-80GB", 80, "94")),
    # the name of GH200-96GB and GH200-144GB before their memory sizes: the memory decides, so both are named, as a
    # memory size alone names each card of that size (was no guess; persona50 s78)
    ("gh200", " (did you mean GH200-96GB or GH200-144GB?)"),
    ("rtx-5090-24gb", OWN_CARD.format("RTX-5090-32GB", 32, "24")),
    # an alias with another size: the family of the card it names (smalls91b: mutants55's g1 took the alias's)
    ("a6000-96gb", OWN_CARD.format("RTX-A6000-48GB", 48, "96")),
    ("b200-192", " (did you mean B200?)"),  # its 192 GB without the unit, as b200-180 (was no guess; persona92d)
    ("b200-192gib", OWN_CARD.format("B200", 180, "192")),  # 192 GiB: more than a B200 reports (179.1 GiB)
    ("h20-3e", ""),  # the H20 of 141GB HBM3e, not the H20-96GB (was guessed so)
    ("H20 HBM3e", ""),  # (was taken as the H20-96GB)
    ("rtx-6000", ""),  # the last part of Quadro-RTX-6000 (no bf16) as much as the start of RTX-6000-Ada-48GB
    ("rtx-6000-ad", " (did you mean RTX-6000-Ada-48GB?)"),
])
def test_an_unknown_gpu_gets_a_guess_by_the_models_rule(name: str, guess: str):
    with pytest.raises(QueryError) as raised:
        load_catalog().gpu(name)
    assert str(raised.value).startswith(f"unknown GPU {name!r}{guess}; accepted: A100-40GB/80GB, ")


def test_a_long_unknown_name_of_doubled_keys_is_refused_without_copying_itself():
    # 'aab' * 33000 (a command-line argument may be 128 KB) had 33000 doubled keys; undoubling each made a 99 KB copy
    # of the name (3 GB, 6 s) to compare with names of a dozen characters. A name that long is now refused by its
    # length (MAX_NAME_CHARACTERS, session 72): one as long as a name may be still goes through the guesses.
    name = "aab" * (MAX_NAME_CHARACTERS // 3)
    tracemalloc.start()
    try:
        with pytest.raises(QueryError) as raised:
            load_catalog().model(name)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(raised.value).startswith("unknown model 'aabaabaab") and peak < 1_000_000  # a copy each: 5.6 MB


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("offload: 1.0\nsp: 0.1\nenv: 1e-3\n", "env: must be a number, got '1e-3' (YAML reads it as text: write 1.0e-3)"),
        ("offload: 1.0\nsp: 2E2\nenv: 0.01\n", "sp: must be a number, got '2E2' (YAML reads it as text: write 200)"),
        # A number its field refuses is not suggested: the bound is named instead.
        ("offload: 1.0\nsp: -.5e1\nenv: 0.01\n",
         "sp: must be a number, got '-.5e1' (YAML reads it as text, and as a number it must be at least 0)"),
        # Quoted, a number is text: the hint says to take the quotes away.
        ("offload: 1.0\nsp: '0.1'\nenv: 0.01\n",
         "sp: must be a number, got '0.1' (quoted, YAML reads it as text: write it without quotes)"),
        ("offload: 1.0\nsp: 'a'\nenv: 0.01\n", "sp: must be a number, got 'a'"),  # no number: no hint
        # quoted digits past Python's 4300 are not read as a number for the hint (that raised a traceback)
        ("offload: 1.0\nsp: '" + "9" * 5000 + "'\nenv: 0.01\n",
         "sp: must be a number, got '" + "9" * 47 + "...999999..."),
    ],
)
def test_numbers_yaml_reads_as_text_get_a_hint(tmp_path: Path, text: str, message: str):
    path = tmp_path / "weights.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_weights(path)
    assert str(caught.value) == f"{path}: {message}"
    if "write " in message and "without quotes" not in message:  # what the hint says to write is a number to YAML
        written = yaml.safe_load(message.rsplit("write ", 1)[1].rstrip(")"))
        assert isinstance(written, (int, float)) and not isinstance(written, bool)
        corrected = text.replace(message.split("got '", 1)[1].split("'", 1)[0], str(written), 1)
        path.write_text(corrected, encoding="utf-8")
        load_weights(path)  # and the file so written loads


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("offload: 1" + "0" * 5000 + "\nsp: 0.1\nenv: 0.01\n", "a number too long to read (thousands of digits)"),
        # a date that does not exist is malformed YAML, not a long number
        ("offload: 2020-13-45\nsp: 0.1\nenv: 0.01\n", "malformed YAML: month must be in 1..12"),
        # PyYAML's message starts with its context ("while constructing an ordered map"): the line says the problem
        ("offload: !!omap 1\nsp: 0.1\nenv: 0.01\n", "line 1: malformed YAML: expected a sequence, but found scalar"),
        # a character YAML does not take, unseen: its line
        ("offload: 1.0\nsp: 0.1\x07\nenv: 0.01\n",
         "line 2: malformed YAML: unacceptable character #x0007: control characters are not allowed"),
        # a null key is a plain key, and given twice is refused
        ("offload: 1.0\nsp: 0.1\nenv: 0.01\nnull: 1\nnull: 2\n", "line 5: key 'null' appears twice"),
        # put back as a number, 1e-3 breaks no bound of offload: sp's own problem is not its hint
        ("offload: 1e-3\nsp: -1\nenv: 0.01\n",
         "offload: must be a number, got '1e-3' (YAML reads it as text: write 1.0e-3) (and 1 more problem, at 'sp')"),
        # three more problems are all named, without dots
        ("offload: x\nsp: -1\nenv: -2\ny: 1\n",
         "offload: must be a number, got 'x' (and 3 more problems, at 'sp', 'env', 'y')"),
    ],
)
def test_a_broken_weights_file_is_refused_in_one_line(tmp_path: Path, text: str, message: str):
    path = tmp_path / "weights.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_weights(path)
    assert str(caught.value) == f"{path}: {message}"


def test_merge_keys_share_defaults_and_a_key_set_twice_beside_them_is_still_refused(tmp_path: Path):
    # YAML 1.1 merge keys: a key the merge brings in and the mapping sets again is the mapping's, not twice.
    path = tmp_path / "weights.yaml"
    path.write_text("<<: {offload: 1.0, sp: 0.1, env: 0.5}\nenv: 0.01\n", encoding="utf-8")
    weights = load_weights(path)
    assert (weights.offload, weights.sp, weights.env) == (1.0, 0.1, 0.01)
    path.write_text("<<: {offload: 1.0, sp: 0.1}\nenv: 0.01\nenv: 0.02\n", encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_weights(path)
    assert str(caught.value) == f"{path}: line 3: key 'env' appears twice"


def test_a_file_past_its_limit_says_both_sizes(tmp_path: Path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a" * (16 * 2**20 + 200_000))
    with pytest.raises(TableError) as caught:
        read_user_file(path)
    assert str(caught.value) == f"{path}: 16.2 MB is too large (the limit is 16 MB)"
    path.write_bytes(b"a" * 300_000)
    with pytest.raises(TableError) as caught:
        read_user_file(path, 256 * 1024)
    assert str(caught.value) == f"{path}: 293 KB is too large (the limit is 256 KB)"


def test_a_file_at_its_limit_is_read_and_one_byte_more_is_not(tmp_path: Path):
    path = tmp_path / "config.yaml"
    path.write_bytes(b"a" * 1024)
    assert read_user_file(path, 1024) == "a" * 1024
    path.write_bytes(b"a" * 1025)
    with pytest.raises(TableError) as caught:
        read_user_file(path, 1024)
    # 1025 bytes round to 1 KB, the limit too: both are said in bytes
    assert str(caught.value) == f"{path}: 1025 bytes is too large (the limit is 1024 bytes)"


def test_a_value_of_sixty_characters_is_shown_whole_and_a_longer_one_cut(tmp_path: Path):
    path = tmp_path / "weights.yaml"
    for value, shown in (("a" * 58, f"'{'a' * 58}'"), ("a" * 59, f"'{'a' * 56}...")):
        path.write_text(f"offload: {value}\nsp: 0.1\nenv: 0.01\n", encoding="utf-8")
        with pytest.raises(TableError) as caught:
            load_weights(path)
        assert str(caught.value) == f"{path}: offload: must be a number, got {shown}"


def test_a_file_that_is_not_utf8_is_refused_naming_its_line(tmp_path: Path):
    path = tmp_path / "weights.yaml"
    path.write_bytes("offload: 1.0\nsp: 0.1\nenv: 0.01  # caf\u00e9\n".encode("latin-1"))
    with pytest.raises(TableError) as caught:
        load_weights(path)
    assert str(caught.value) == (f"{path}: line 3 is not UTF-8 (another encoding, such as GBK or Latin-1): save the "
                                 "file as UTF-8")


PLACEMENT_YAML = "placements: []\nunplaced: []\n"
"""A saved placement's telling keys (``solve cluster --json``'s), as YAML any loader reads."""


def _given(tmp_path: Path, wrong: str) -> Path:
    """The file at `wrong` (from the repository's root), or a saved placement's keys written as one."""
    if wrong != PLACEMENT_YAML:
        return Path(__file__).parent.parent / wrong
    path = tmp_path / "placement.yaml"
    path.write_text(PLACEMENT_YAML, encoding="utf-8")
    return path


@pytest.mark.parametrize(("load", "wrong", "kind"), [
    # apiwords90/apiwords90b: in the API's words, as the loaders are the API's (the command's: below); before, the
    # command's flags (for --cells, for solve cluster, give it with --current) named options the API has not
    ("load_memory_model", "docs/examples/my-cells.yaml",
     "a cells file, for catalog.with_cells or solver.calibrate_memory_model(cells=...)"),
    ("load_memory_model", "docs/examples/fleet.yaml", "a fleet file, for solver.place or solver.load_fleet"),
    ("load_weights", "tables/memory-model.yaml",
     "a memory-model file, for solver.load_memory_model, as solver.render.memory_model_yaml writes"),
    ("load_memory_model", "tables/costs.yaml", "a cost-weights file, for solver.load_weights"),
    ("load_fleet", "docs/examples/my-model/config.json",
     "a Hugging Face config.json, for solver.load_model_config and catalog.with_model"),
    ("load_weights", PLACEMENT_YAML, ("solve cluster --json's output, a placement: give it as solver.place's "
                                      "current=, beside the fleet, to keep its jobs where they run")),
    *[(load, "docs/examples/trinity.yaml", "a Trinity config, for solver.check_config or solver.api.config_query")
      for load in ("load_weights", "load_memory_model", "load_fleet")],
])
def test_a_file_of_another_kind_is_refused_naming_the_kind_it_looks_like(tmp_path: Path, load: str, wrong: str,
                                                                         kind: str):
    path = _given(tmp_path, wrong)
    with pytest.raises(TableError) as caught:
        getattr(solver.tables, load)(path)
    message = str(caught.value)
    said = f": this looks like {kind}" if wrong == PLACEMENT_YAML else f" (this looks like {kind})"  # alone: cluster92
    assert "\n" not in message and message.endswith(said)
    assert " --" not in message.replace("solve cluster --json's output", "a placement")  # no option to give


@pytest.mark.parametrize(("option", "wrong", "kind"), [
    ("--weights", "docs/examples/my-cells.yaml", "a cells file, for --cells"),
    ("--memory-model", "tables/costs.yaml", "a cost-weights file, for --weights"),
    ("--weights", "tables/memory-model.yaml",
     "a memory-model file, for --memory-model, as solve calibrate --out writes"),
    ("--memory-model", "docs/examples/my-model/config.json", "a Hugging Face config.json, for --model-config"),
    ("--cells", "docs/examples/fleet.yaml", "a fleet file, for solve cluster"),
    ("cluster", PLACEMENT_YAML, ("solve cluster --json's output, a placement: give it with --current, beside the "
                                 "cluster file, to keep its jobs where they run")),
])
def test_the_command_given_a_file_of_another_kind_names_its_own_options(cli, tmp_path: Path, option: str, wrong: str,
                                                                        kind: str):
    # apiwords90b: the command passes its words (COMMAND_OPTIONS.file_readers) where the API's loaders name its calls
    path = _given(tmp_path, wrong)
    status, out, err = cli(option, str(path), *(() if option == "cluster" else ("--model", "8B", "--gpu", "h100")))
    assert (status, out) == (2, "")
    said = f" {path}: this looks like {kind}\n" if wrong == PLACEMENT_YAML else f" (this looks like {kind})\n"
    assert err.count("\n") == 1 and err.endswith(said)


@pytest.mark.parametrize("top", ["pools: []\n", "jobs: []\n", "gpu: x\n"])
def test_a_file_with_one_of_a_kinds_keys_is_not_said_to_look_like_it(tmp_path: Path, top: str):
    # A kind is told by all its top-level keys: a fleet file's pools and jobs, a cells file's gpu and tables.
    path = tmp_path / "f.yaml"
    path.write_text(top, encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_memory_model(path)
    assert str(caught.value) == (f"{path}: unknown field '{top.split(':')[0]}' (fields: source, coefficients, margin, "
                                 "fit) (and 4 more problems, at 'source', 'coefficients', 'margin', ...)")


@pytest.mark.parametrize(("wrong", "kind"), [
    ("docs/examples/fleet.yaml", "a fleet file, for solve cluster"),
    ("docs/examples/my-cells.yaml", "a cells file, for --cells"),
    ("tables/costs.yaml", "a cost-weights file, for --weights"),
])
def test_from_config_given_a_file_of_another_kind_names_the_kind(cli, wrong: str, kind: str):
    path = Path(__file__).parent.parent / wrong
    status, out, err = cli("--from-config", str(path), "--gpu", "a100")
    assert (status, out) == (2, "")
    assert err == f"solve: error: --from-config {path}: missing model.model_path (this looks like {kind})\n"


@pytest.mark.parametrize("option", [("--weights",), ("--memory-model",), ("cluster",)])
def test_the_command_given_a_trinity_config_for_another_file_names_from_config(cli, option: tuple[str, ...]):
    # apiwords90: the command's words (COMMAND_OPTIONS.file_readers), where the API's loaders name check_config
    path = Path(__file__).parent.parent / "docs/examples/trinity.yaml"
    status, out, err = cli(*option, str(path), *(() if option == ("cluster",) else ("--model", "8B", "--gpu", "h100")))
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and err.endswith(" (this looks like a Trinity config, for --from-config)\n")


def test_check_config_given_verls_own_config_names_itself_where_the_command_names_from_config(tmp_path: Path):
    path = tmp_path / "ppo_trainer.yaml"
    path.write_text("actor_rollout_ref:\n  model:\n    path: Qwen/Qwen3-8B\ntrainer:\n  n_gpus_per_node: 8\n",
                    encoding="utf-8")
    with pytest.raises(solver.ConfigError) as caught:
        solver.check_config(path, gpu="h100")
    said = "solver.check_config or solver.api.config_query reads a Trinity-RFT config, which takes verl's keys"
    assert f": {said} " in str(caught.value)


def test_from_config_given_verls_own_config_says_so_not_only_that_model_path_is_missing(cli, tmp_path: Path):
    # A verl user's ppo_trainer.yaml (actor_rollout_ref at the top) has no model.model_path: the line says why.
    path = tmp_path / "ppo_trainer.yaml"
    path.write_text("data:\n  train_batch_size: 256\nactor_rollout_ref:\n  model:\n    path: Qwen/Qwen3-8B\n"
                    "trainer:\n  n_gpus_per_node: 8\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "h100")
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --from-config {path}: missing model.model_path (this looks like verl's own config, "
                   "its actor_rollout_ref at the top: --from-config reads a Trinity-RFT config, which takes verl's keys "
                   "under trainer.trainer_config and its model, lengths and GPUs as model.* and cluster.*)\n")


def test_a_cells_file_naming_its_gpu_as_nvidia_smi_prints_it_is_the_catalogues_gpu_type(tmp_path: Path):
    catalog = load_catalog()
    text = (Path(__file__).parent.parent / "docs/examples/my-cells.yaml").read_text(encoding="utf-8")
    path = tmp_path / "cells.yaml"
    path.write_text(text.replace("gpu: H100-80GB ", "gpu: NVIDIA H100 80GB HBM3 "), encoding="utf-8")
    measured = load_gpu_type(path, catalog.models, catalog.gpu_types)
    assert (measured.name, measured.aliases, measured.memory_mib) == ("H100-80GB", ("h100", "h100-80g"), 81559)


def test_a_cells_file_aliasing_a_catalogue_gpu_by_its_own_name_keeps_no_alias_equal_to_the_name(tmp_path: Path):
    # `gpu: h100` is the catalogue's H100-80GB: that name, given as an alias too, is its name, not an alias of it.
    catalog = load_catalog()
    text = (Path(__file__).parent.parent / "docs/examples/my-cells.yaml").read_text(encoding="utf-8")
    path = tmp_path / "cells.yaml"
    aliased = text.replace("gpu: H100-80GB ", "gpu: h100\naliases: [H100-80GB, h100, my-h100] ")
    path.write_text(aliased, encoding="utf-8")
    measured = load_gpu_type(path, catalog.models, catalog.gpu_types)
    assert (measured.name, measured.aliases) == ("H100-80GB", ("h100", "h100-80g", "my-h100"))


def test_holds_text_is_false_for_a_file_that_goes_on_past_the_text(tmp_path: Path):
    path = tmp_path / "f.txt"
    path.write_text("abcd", encoding="utf-8")
    assert [holds_text(path, text) for text in ("abcd", "abc", "abcde", "")] == [True, False, False, False]


def test_a_file_without_a_size_is_read_one_byte_past_the_limit_and_refused():
    # A device (or a pipe) has no size to check first: one byte more than the limit is read, so it is refused.
    with pytest.raises(TableError) as caught:
        read_user_file(Path("/dev/zero"), 2048)
    assert str(caught.value) == "/dev/zero: too large (the limit is 2 KB)"


def test_a_name_that_ends_another_without_a_dash_gets_no_guess():
    # '0B' ends Llama-3.1-70B's name, but not as its last part: no guess.
    with pytest.raises(QueryError) as raised:
        load_catalog().model("0B")
    assert str(raised.value).startswith("unknown model '0B'; accepted: Qwen3-0.6B/1.7B/8B/14B(-Base), ")


def test_a_gpu_types_own_table_for_a_count_comes_before_a_borrowed_one_in_count_order(tmp_path: Path):
    # Made-up A800 cells for 6 GPUs (the A100's row at 4096, so no contradiction): the A800 plans with its own table
    # for 6 and the A100's for 1, 2 and 4, by GPU count; each count the A800 has tables for, its own or borrowed.
    cells = tmp_path / "a800.yaml"
    cells.write_text("gpu: A800-80GB\nmemory_gb: 80\nsource: made up\ntables:\n"
                     "  - {gpus: 6, section: 6 x A800, models: [Qwen3-8B], rows: [{max_model_len: 4096, "
                     "cells: {Qwen3-8B: vanilla}}]}\n", encoding="utf-8")
    catalog = load_catalog().with_cells(cells)
    model = catalog.model("8B")
    tables = catalog.tables_for("A800-80GB", model).tables
    assert [table.gpus for table in tables] == [1, 2, 4, 6]
    assert [row.max_model_len for row in tables[-1].rows] == [4096]  # its own: one row
    assert dict(catalog.table_origins("A800-80GB", model)) == {  # and its own measured one by its source
        1: TableOrigin("A100-80GB", None), 2: TableOrigin("A100-80GB", None), 4: TableOrigin("A100-80GB", None),
        6: TableOrigin(None, "made up")}
    # Without cells of its own, the A800 still plans over the A100's counts (its default budget is 6 GPUs, not 8).
    assert load_catalog().tabled_counts("A800-80GB") == {1, 2, 4, 6}


def test_every_package_of_the_source_is_installed():
    # pyproject.toml lists the packages by hand (the tables are installed as solver.data): a subpackage left
    # out of the list would work in a checkout and be missing from a wheel.
    root = Path(__file__).resolve().parent.parent
    pyproject = (root / "pyproject.toml").read_text(encoding="utf-8")
    listed = re.search(r"^packages = \[(.*?)\]", pyproject, re.MULTILINE | re.DOTALL)
    assert listed is not None
    packages = {".".join(init.parent.relative_to(root).parts) for init in (root / "solver").rglob("__init__.py")}
    shipped_data = {"solver.data", "solver.data.feasibility", "solver.examples"}
    assert set(re.findall(r'"([\w.]+)"', listed[1])) == packages | shipped_data


def test_a_dangling_link_is_the_same_file_as_where_it_leads_and_two_missing_paths_are_not(tmp_path: Path):
    link, target, other = tmp_path / "link.yaml", tmp_path / "out.yaml", tmp_path / "other.yaml"
    link.symlink_to(target)  # out.yaml does not exist yet: the link leads nowhere, but a write through it makes it
    assert resolved_path(link) == target and resolved_path(target) == target
    assert same_file(link, target) and same_file(target, link)
    assert not same_file(target, other) and not same_file(link, other)


def test_two_names_of_one_existing_file_are_the_same_file(tmp_path: Path):
    # A hard link names the file itself, wherever it is and whatever its name.
    (tmp_path / "a").mkdir()
    target, other = tmp_path / "out.yaml", tmp_path / "a" / "other.yaml"
    target.write_text("x\n", encoding="utf-8")
    (tmp_path / "a" / "hard.yaml").hardlink_to(target)
    other.write_text("x\n", encoding="utf-8")
    assert same_file(tmp_path / "a" / "hard.yaml", target) and not same_file(other, target)


def test_paths_as_typed_are_the_same_file_where_they_lead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Relative, and through a link to the folder: a dangling link is the file it would make, however it is named.
    monkeypatch.chdir(tmp_path)
    Path("real").mkdir()
    Path("folder").symlink_to("real")
    Path("real", "link.yaml").symlink_to("out.yaml")
    assert same_file(Path("folder/link.yaml"), Path("real/out.yaml"))
    assert same_file(Path("real/link.yaml"), tmp_path / "folder" / "out.yaml")
    assert not same_file(Path("real/link.yaml"), Path("real/other.yaml"))


def test_an_error_message_is_one_line_whatever_line_breaks_a_quoted_name_holds():
    # a carriage return would move the terminal's cursor back over the message, a line feed split it: both escaped
    assert str(QueryError("unknown model 'a\rb\nc'")) == "unknown model 'a\\rb\\nc'"
    assert str(TableError("x.yaml: line\r\n2")) == "x.yaml: line\\r\\n2"


@pytest.mark.parametrize(("memory_gb", "memory_mib", "sold_gb"), [
    (8, None, 8), (4096, None, 4096), (None, 8192, 8), (None, 4096 * 1024, 4096), (80, 69632, 80), (80, 86016, 80),
    (None, 8653, 9)])  # 8.45 GiB is nearest 8 GB, but 8 GB reports at most 8601 MiB (1.05 times): sold as 9
def test_a_gpu_type_of_your_own_may_have_the_memory_at_each_bound(memory_gb: int | None, memory_mib: int | None,
                                                                  sold_gb: int):
    # 8 GB (8192 MiB) to 4096 GB (4194304 MiB); the MiB from 0.85 to 1.05 times the GB's, both ends included.
    gpu_type = described_gpu_type(" Mine ", memory_gb, memory_mib)
    assert (gpu_type.name, gpu_type.memory_mib, gpu_type.memory_gb) == ("Mine", memory_mib, sold_gb)


@pytest.mark.parametrize(("memory_gb", "memory_mib", "message"), [
    (7, None, "Mine: its memory must be from 8 to 4096 GB, got 7 GB"),
    (4097, None, "Mine: its memory must be from 8 to 4096 GB, got 4097 GB"),  # no GPU's GB, nor a driver's MiB
    (16385, None, ("Mine: its memory must be from 8 to 4096 GB, got 16385 GB (no GPU has 16385 GB; if it is "
                   "nvidia-smi's total in MiB, 16.0 GiB, give memory_mib=16385)")),
    (None, 8191, "Mine: its memory must be from 8192 MiB (8 GiB) to 4194304 MiB, got 8191 MiB"),
    (None, 4096 * 1024 + 1, "Mine: its memory must be from 8192 MiB (8 GiB) to 4194304 MiB, got 4194305 MiB"),
    (80, 69631, ("Mine: 69631 MiB is not what a GPU sold as 80 GB reports (from 69632 to 86016 MiB): give one of "
                 "the two")),
    (80, 86017, ("Mine: 86017 MiB is not what a GPU sold as 80 GB reports (from 69632 to 86016 MiB): give one of "
                 "the two")),
])
def test_a_gpu_type_of_your_own_past_a_bound_is_refused(memory_gb: int | None, memory_mib: int | None, message: str):
    with pytest.raises(QueryError) as raised:
        described_gpu_type("Mine", memory_gb, memory_mib)
    assert str(raised.value) == message


@pytest.mark.parametrize("path", ["Qwen/Qwen3-4B/", "/models/Qwen3-4B//", "C:\\models\\Qwen3-4B\\"])
def test_a_model_path_with_a_trailing_separator_is_named_by_its_last_folder(path: str):
    assert load_catalog().model(path).name == "Qwen3-4B"


def test_a_gpu_type_of_your_own_is_listed_by_its_name_without_its_aliases():
    # The accepted names are names alone; the example of a short form is the shortest alias of all (l4).
    catalog = load_catalog().with_gpu_types([GpuType(gpu="MyAccel", memory_gb=64, aliases=("Accel",), source="mine")])
    with pytest.raises(QueryError) as raised:
        catalog.gpu("nope")
    assert str(raised.value).endswith(", MI300X, MI325X, MyAccel; short forms such as l4 for L4-24GB too")


def test_accepted_names_of_more_than_one_part_after_their_shared_start_are_whole():
    # Acc-1-16GB and Acc-2-32GB share "Acc-" alone ("Acc-1-" is the first's own, and its -Pro variant's), and two parts
    # follow it in each: Acc-1-16GB/2-32GB would read as one card, so each is listed whole with its variants.
    catalog = load_catalog().with_gpu_types([GpuType(gpu=name, memory_gb=64, source="mine") for name in (
        "Acc-1-16GB", "Acc-1-16GB-Pro", "Acc-2-32GB", "Acc-2-32GB-Pro")])
    with pytest.raises(QueryError) as raised:
        catalog.gpu("nope")
    assert str(raised.value).endswith(
        ", MI300X, MI325X, Acc-1-16GB(-Pro), Acc-2-32GB(-Pro); short forms such as l4 for L4-24GB too")


@pytest.mark.parametrize(("names", "listed"), [
    (("Größe-40GB", "Größe-48GB"), "Größe-40GB/48GB"),  # ß is ss when matched: a start one letter longer
    (("My  Card-40GB", "My  Card-48GB"), "My  Card-40GB/48GB"),  # two spaces are one hyphen
])
def test_accepted_names_share_a_start_that_matching_spells_otherwise_whole(names: tuple[str, ...], listed: str):
    # The name after the shared start is cut where the start ends in the name as written, not in its matched form.
    catalog = load_catalog().with_gpu_types([GpuType(gpu=name, memory_gb=64, source="mine") for name in names])
    with pytest.raises(QueryError) as raised:
        catalog.gpu("nope")
    assert str(raised.value).endswith(f", MI300X, MI325X, {listed}; short forms such as l4 for L4-24GB too")


def test_a_table_naming_a_model_and_the_model_it_stands_for_gives_the_model_its_own_cells():
    # Cells measured for Qwen3-8B-Base beside Qwen3-8B's: its own column speaks for it, not Qwen3-8B's.
    catalog = load_catalog()
    table = Table.model_validate({"gpus": 2, "section": "mine", "models": ["Qwen3-8B", "Qwen3-8B-Base"],
                                  "rows": [{"max_model_len": 4096, "cells": {"Qwen3-8B": "vanilla",
                                                                             "Qwen3-8B-Base": "vanilla"}}]})
    assert table.name_for(catalog.model("8B-Base")) == "Qwen3-8B-Base"
    assert table.name_for(catalog.model("8B")) == "Qwen3-8B"
    assert table.name_for(catalog.model("4B-Base")) is None


@pytest.mark.parametrize(("table_gpus", "gpus", "vouches"), [
    (4, 4, True), (1, 1, True), (2, 64, True), (2, 65, False), (1, 2, False), (4, 2, False), (64, 64, True),
])
def test_a_table_vouches_for_its_own_count_and_more_gpus_up_to_the_estimates_most(
        table_gpus: int, gpus: int, vouches: bool):
    # One GPU has no collective-communication buffers: its table vouches for one GPU alone.
    assert vouches_for(table_gpus, gpus) is vouches
    assert vouches_for(2, 65, most=65) and not vouches_for(2, 66, most=65)


def test_a_checkpoint_in_a_folder_named_by_an_alias_is_that_model_only_if_of_its_shape(tmp_path: Path):
    # Qwen3-8B's shape in a folder 8B is Qwen3-8B; in a folder 4B (Qwen3-4B's alias, another shape) it is a model of
    # its own, under its own name, without the folder's name, whose cells are Qwen3-8B's.
    catalog = load_catalog()
    for folder, name in (("8B", "Qwen3-8B"), ("4B", "my-sft")):
        config = load_model_config(qwen3_8b_checkpoint(tmp_path / folder, _name_or_path="me/my-sft"))
        added = catalog.with_model(config)
        model = added.model(name)
        assert (model.name, model.aliases, model.tables_of) == (
            (name, ("8B",), None) if folder == "8B" else (name, (), "Qwen3-8B"))
        assert len(added.models) == len(catalog.models) + (folder == "4B")
        assert added.model("4B").name == "Qwen3-4B"


def test_a_catalogue_models_config_gives_it_its_own_context_and_rope_scaling(tmp_path: Path):
    config = load_model_config(qwen3_8b_checkpoint(tmp_path / "q", _name_or_path="Qwen/Qwen3-8B",
                                                   max_position_embeddings=65536,
                                                   rope_scaling={"rope_type": "llama3", "factor": 2.0,
                                                                 "low_freq_factor": 1.0, "high_freq_factor": 4.0}))
    model = load_catalog().with_model(config).model("8B")
    assert (model.name, model.native_context, model.rope_scaling) == ("Qwen3-8B", 65536, "llama3")
    assert load_catalog().model("8B").rope_scaling is None


def test_a_checkpoint_of_a_shape_whose_first_model_stands_for_another_takes_the_cells_of_the_one_standing(
        tmp_path: Path):
    # Qwen2.5-7B-Instruct comes before Qwen2.5-7B in models.yaml, whose cells stand for it: a checkpoint of their
    # shape takes Qwen2.5-7B's cells too, not those of a model that has none of its own.
    base = load_catalog().model("Qwen2.5-7B")
    (tmp_path / "config.json").write_text(json.dumps({
        "_name_or_path": "me/my-qwen", "model_type": "qwen2", "hidden_size": base.hidden_size,
        "intermediate_size": base.intermediate_size, "num_hidden_layers": base.num_layers,
        "num_attention_heads": base.num_attention_heads, "num_key_value_heads": base.num_key_value_heads,
        "vocab_size": base.vocab_size, "tie_word_embeddings": base.tied_embeddings,
        "max_position_embeddings": base.native_context}), encoding="utf-8")
    model = load_catalog().with_model(load_model_config(tmp_path)).models[-1]
    assert (model.name, model.tables_of) == ("my-qwen", "Qwen2.5-7B")


def test_yarn_is_validated_up_to_a_factor_of_4_and_131072_tokens_both_included():
    qwen = load_catalog().model("8B").model_copy(update={"native_context": 32768})
    assert (qwen.yarn_factor(32768), qwen.yarn_factor(32769), qwen.yarn_factor(131072)) == (None, 32769 / 32768, 4.0)
    assert not qwen.yarn_beyond_validated(131072) and qwen.yarn_beyond_validated(131073)
    short = qwen.model_copy(update={"native_context": 16384})  # a factor of 5 at 81920 tokens: beyond
    assert not short.yarn_beyond_validated(65536) and short.yarn_beyond_validated(65537)
    llama = qwen.model_copy(update={"rope_scaling": "llama3"})  # its own scaling: no YaRN, from one token beyond
    assert llama.yarn_factor(65536) is None and not llama.yarn_beyond_validated(65536)
    assert not llama.beyond_native_on_own_scaling(32768) and llama.beyond_native_on_own_scaling(32769)
    assert not qwen.beyond_native_on_own_scaling(65536)


@pytest.mark.parametrize(("counts", "message"), [
    ([1], "A100-80GB has a table for 1 GPU already"),
    ([2], "A100-80GB has a table for 2 GPUs already"),
    ([3, 4, 6], "A100-80GB has a table for 4 and 6 GPUs already"),
])
def test_measured_tables_for_a_count_the_catalogue_has_are_refused_naming_the_counts(counts: list[int], message: str):
    catalog = load_catalog()
    rows = [{"max_model_len": 4096, "cells": {"Qwen3-4B": "vanilla"}}]
    measured = GpuType(gpu="A100-80GB", memory_gb=80, source="mine", tables=tuple(
        Table.model_validate({"gpus": count, "section": "mine", "models": ["Qwen3-4B"], "rows": rows})
        for count in counts))
    with pytest.raises(QueryError) as raised:
        catalog.with_tables(measured)
    assert str(raised.value).startswith(f"{message}; measured cells join the tables where they have none")


def test_measured_tables_join_the_catalogues_in_gpu_count_order_and_a_gpu_type_it_has_is_not_added_twice():
    catalog = load_catalog()
    measured = GpuType(gpu="A100-80GB", memory_gb=80, source="mine", tables=(
        Table.model_validate({"gpus": 3, "section": "mine", "models": ["Qwen3-4B"],
                              "rows": [{"max_model_len": 4096, "cells": {"Qwen3-4B": "vanilla"}}]}),))
    assert [table.gpus for table in catalog.with_tables(measured).gpu("a100").tables] == [1, 2, 3, 4, 6]
    assert catalog.with_gpu_types([catalog.gpu("h100")]) == catalog
    mine = described_gpu_type("Mine", 64)
    assert catalog.with_gpu_types([mine]).with_gpu_types([mine]) == catalog.with_gpu_types([mine, mine])
    assert catalog.with_gpu_types([mine]).gpu_types == (*catalog.gpu_types, mine)


def test_gpu_types_of_one_memory_as_sold_but_no_driver_figure_borrow_no_tables():
    # Memory as sold says too little: only the same driver-reported MiB lends a GPU type's tables to another.
    table = Table.model_validate({"gpus": 2, "section": "mine", "models": ["Qwen3-4B"],
                                  "rows": [{"max_model_len": 4096, "cells": {"Qwen3-4B": "vanilla"}}]})
    catalog = load_catalog().with_gpu_types([GpuType(gpu="Mine", memory_gb=64, source="mine", tables=(table,)),
                                             GpuType(gpu="Yours", memory_gb=64, source="yours")])
    assert (catalog.tabled_counts("Mine"), catalog.tabled_counts("Yours")) == ({2}, set())
    twins = load_catalog().with_gpu_types([GpuType(gpu="Mine", memory_gb=64, memory_mib=65536, source="mine",
                                                   tables=(table,)),
                                           GpuType(gpu="Yours", memory_gb=64, memory_mib=65536, source="yours")])
    assert twins.tabled_counts("Yours") == {2}


def test_a_contradiction_within_the_cells_of_one_gpu_type_is_not_said_again_for_two_of_the_same_memory(tmp_path: Path):
    # Made-up A800 cells: Env at 16384 (the A100's cell there too) but vanilla at 18000 (a length the A100 has no
    # row for). The A800's own tables say it; the two GPU types of one memory together add nothing.
    cells = tmp_path / "a800.yaml"
    cells.write_text("gpu: A800-80GB\nmemory_gb: 80\nsource: made up\ntables:\n"
                     "  - {gpus: 2, section: 2 x A800, models: [Qwen3-4B], rows: [{max_model_len: 16384, "
                     "cells: {Qwen3-4B: Env}}, {max_model_len: 18000, cells: {Qwen3-4B: vanilla}}]}\n",
                     encoding="utf-8")
    catalog = load_catalog().with_cells(cells, keep_contradictions=True)
    assert catalog.contradictions() == [
        ("A800-80GB, 2 GPUs, Qwen3-4B: Env at 16384 but vanilla trains at the longer 18000 (memory only grows with the "
         "length)")]


def _cells_file(path: Path, tables: list[tuple[int, int, int]]) -> Path:
    """A cells file of H100 tables, each (GPUs, models, rows): Qwen3-8B then Qwen3-14B, every cell Env + Offload +
    SP=8, at 8 * row tokens."""
    names = ["8B", "14B"]
    lines = ["gpu: H100-80GB", "memory_gb: 80", "source: generated", "tables:"]
    for gpus, models, rows in tables:
        lines += [f"  - gpus: {gpus}", "    section: s", f"    models: [{', '.join(names[:models])}]", "    rows:"]
        cells = ", ".join(f"{name}: Env + Offload + SP=8" for name in names[:models])
        lines += [f"      - {{max_model_len: {8 * row}, cells: {{{cells}}}}}" for row in range(1, rows + 1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("tables", "cells"), [
    ([(8, 2, 1025)], 2050),  # a cell for each model of a row
    ([(8, 1, 1025), (16, 1, 1025)], 2050),  # the cells of all its tables
    ([(8, 1, 2000), (16, 1, 49)], 2049),
])
def test_a_gpu_types_cells_are_counted_over_its_models_and_tables(tmp_path: Path, tables: list, cells: int):
    path = _cells_file(tmp_path / "cells.yaml", tables)
    with pytest.raises(TableError) as raised:
        load_catalog().with_cells(path)
    assert str(raised.value) == (f"{path}: {cells} cells, more than the 2048 a GPU type's tables may have (each is a "
                                 "measured run: give the lengths you train at)")


def test_2048_cells_over_two_tables_are_taken(tmp_path: Path):
    fewer = _cells_file(tmp_path / "fewer.yaml", [(8, 1, 1024), (16, 1, 1024)])
    assert [table.gpus for table in load_catalog().with_cells(fewer).gpu("h100").tables] == [8, 16]


def test_cells_of_the_catalogues_own_source_join_its_tables_as_the_documents(tmp_path: Path):
    # A cells file whose source is the GPU type's own in the catalogue: its table is the document's, not measured
    # cells of yours (no origin to cite); another source is cited.
    catalog = load_catalog()
    own_source = catalog.gpu("A800-80GB").source
    for source, origin in ((own_source, {}), ("made up", {6: TableOrigin(None, "made up")})):
        cells = tmp_path / "a800.yaml"
        cells.write_text(yaml.safe_dump({"gpu": "A800-80GB", "memory_gb": 80, "source": source, "tables": [
            {"gpus": 6, "section": "6 x A800", "models": ["Qwen3-8B"],
             "rows": [{"max_model_len": 4096, "cells": {"Qwen3-8B": "vanilla"}}]}]}), encoding="utf-8")
        origins = catalog.with_cells(cells).table_origins("A800-80GB", catalog.model("8B"))
        assert {gpus: found for gpus, found in origins.items() if found.gpu is None} == origin


def test_a_yaml_error_without_a_mark_or_a_position_has_no_place():
    # Only a mark, or a reader's position (a character it refuses), places an error on a line.
    assert yaml_error_place(yaml.YAMLError("no place"), "a: 1\nb: 2\n") == ""
    assert yaml_error_place(yaml.reader.ReaderError("t", 6, 7, "utf-8", "unacceptable"), "a: 1\nb: 2\n") == "line 2: "
