"""A file's values in refusals as the file spells them (session 72, review persona34 item 3): ``true``, ``null``,
``2024-01-01``, ``.inf``, not Python's ``True``, ``None``, ``datetime.date(2024, 1, 1)``, ``inf``; text that YAML
reads, unquoted, as a date or null is told to be quoted, as a boolean or a number was; in fleets, own tables, model
catalogues, ``--current`` files and Trinity configs."""
from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.tables import TableError, brief, load_fleet, yaml_brief
from solver.tables.reading import load_models
from solver.trinity import ConfigError, load_config_mapping

Cli = Callable[..., tuple[int, str, str]]
EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"
FLEET = ("pools:\n  - {{name: {pool}, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}}\n"
         "jobs:\n  - {{name: j, model: 4B, {job}}}\n")
QUOTE = "quote it to keep it as text)"


@pytest.mark.parametrize(("value", "written"), [
    (True, "true"), (False, "false"), (None, "null"), (datetime.date(2024, 1, 1), "2024-01-01"),
    (datetime.datetime(2024, 1, 1, 10, 30), "2024-01-01 10:30:00"), (float("inf"), ".inf"), (float("-inf"), "-.inf"),
    (float("nan"), ".nan"), (2.5, "2.5"), ("on", "'on'"), ([True, None, {"a": False}], "[true, null, {'a': false}]"),
])
def test_a_files_value_is_shown_in_yamls_spelling(value: object, written: str):
    assert yaml_brief(value) == written


def test_a_files_value_is_cut_as_brief_cuts_a_python_value():
    deep: list[object] = [True]
    for _ in range(8):
        deep = [deep] * 9
    assert yaml_brief(deep) == brief(deep) and len(yaml_brief(deep)) == 60  # 9 ** 8 lists not written out
    assert yaml_brief(10 ** 5000) == "a whole number of about 5000 digits"


@pytest.mark.parametrize(("pool", "job", "message"), [
    # A name YAML reads as a date, true or false, or a number is its text as written (test_smallslips18_s74); the
    # model a job names is not a name of the file's.
    ("a", "max_model_len: 4096, model_config: 2024-01-01",
     f"line 4: job j, model_config: must be text, got 2024-01-01 (YAML reads it, unquoted, as a date: {QUOTE}"),
    ("~", "max_model_len: 4096", ("line 2: pools item 1, name: must be text, got null (YAML reads an empty value, or ~ "
                                  "or null unquoted, as null: give the text, in quotes to keep ~ or null)")),
    ("a", "max_model_len: true",
     "line 4: job j, max_model_len: must be a whole number, got true (tokens, or thousands of 1024: 32768 or 32k)"),
    ("a", "max_model_len: 4096, rollout_gpus: 2024-01-01",
     "line 4: job j, rollout_gpus: must be a whole number, got 2024-01-01"),
])
def test_a_fleets_refusal_quotes_the_value_as_yaml_spells_it(cli: Cli, tmp_path: Path, pool: str, job: str,
                                                             message: str):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(pool=pool, job=job), encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", f"solve cluster: error: {fleet}: {message}\n")


def test_a_quoted_date_is_a_pools_name(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(pool="'2024-01-01'", job="max_model_len: 4096"), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    assert (status, err) == (0, "") and "2024-01-01" in out


def test_a_pools_gpu_read_as_a_number_is_the_gpu_type_it_names_or_told_to_be_quoted(tmp_path: Path):
    # gpu: 4090 unquoted (YAML's int) names the RTX 4090 as "4090" does (hints88); 1234 names none: quote it, as before.
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(pool="a", job="max_model_len: 4096").replace("A100-80GB", "4090"), encoding="utf-8")
    assert [pool.gpu for pool in load_fleet(fleet).pools] == ["RTX-4090-24GB"]
    fleet.write_text(FLEET.format(pool="a", job="max_model_len: 4096").replace("A100-80GB", "1234"), encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(fleet)
    assert str(caught.value) == (f"{fleet}: line 2: pool a, gpu: must be text, got 1234 (YAML reads it, unquoted, as a "
                                 f"number: {QUOTE}")


def test_a_model_catalogues_name_read_as_a_date_is_told_to_be_quoted(tmp_path: Path):
    models = tmp_path / "models.yaml"
    shipped = (Path(__file__).parent.parent / "tables" / "models.yaml").read_text(encoding="utf-8")
    models.write_text(shipped.replace("name: Qwen3-0.6B,", "name: 2024-01-01,", 1), encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_models(models)
    assert str(caught.value) == (f"{models}: model 2024-01-01, name: must be text, got 2024-01-01 (YAML reads it, "
                                 f"unquoted, as a date: {QUOTE}")


def test_a_cells_files_gpu_name_read_as_true_is_told_to_be_quoted(cli: Cli, tmp_path: Path):
    cells = tmp_path / "cells.yaml"
    text = (EXAMPLES / "my-cells.yaml").read_text(encoding="utf-8")
    cells.write_text(text.replace("\ngpu: H100-80GB", "\ngpu: yes", 1), encoding="utf-8")
    message = (f"--cells {cells}: line 6: gpu: must be text, got true (YAML reads it, unquoted, as true or false: "
               f"{QUOTE}")
    assert cli("--cells", str(cells), "--model", "8B", "--gpu", "a100") == (2, "", f"solve: error: {message}\n")


def test_a_current_files_schema_version_is_quoted_as_json_spells_it(cli: Cli, tmp_path: Path):
    current = tmp_path / "now.json"
    current.write_text(json.dumps({"schema_version": None, "placements": []}), encoding="utf-8")
    status, out, err = cli("cluster", str(EXAMPLES / "fleet.yaml"), "--current", str(current))
    assert (status, out) == (2, "")
    assert err.startswith(f"solve cluster: error: --current {current}: schema_version is null: this release of ")


@pytest.mark.parametrize(("line", "message"), [
    ("mode: off", f"mode must be text, got false (YAML reads it, unquoted, as true or false: {QUOTE}"),
    ("mode: 8", f"mode must be text, got 8 (YAML reads it, unquoted, as a number: {QUOTE}"),
    ("mode: [on, ~]", "mode must be text, got [true, null]"),
])
def test_a_trinity_configs_refusal_quotes_the_value_as_yaml_spells_it(cli: Cli, tmp_path: Path, line: str,
                                                                      message: str):
    config = tmp_path / "trinity.yaml"
    text = (EXAMPLES / "trinity.yaml").read_text(encoding="utf-8")
    config.write_text(text.replace("mode: both", line, 1), encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "A100-80GB") == (
        2, "", f"solve: error: --from-config {config}: {message}\n")


def test_a_trinity_configs_number_past_every_count_is_quoted_as_yaml_spells_it(cli: Cli, tmp_path: Path):
    config = tmp_path / "trinity.yaml"
    text = (EXAMPLES / "trinity.yaml").read_text(encoding="utf-8")
    config.write_text(text.replace("node_num: 1", "node_num: .inf", 1), encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "A100-80GB") == (
        2, "", f"solve: error: --from-config {config}: cluster.node_num must be a whole number, got .inf\n")


@pytest.mark.parametrize(("keys", "named"), [
    ("on: 1\nyes: 2\n", "'yes', which YAML reads as true,"), ("true: 1\ntrue: 2\n", "true"),
    ("010: 1\n8: 2\n", "8"), ("a: 1\na: 2\n", "'a'"),
])
def test_a_trinity_configs_key_given_twice_is_named_as_written(keys: str, named: str):
    with pytest.raises(ConfigError) as caught:
        load_config_mapping(f"model:\n  model_path: Qwen/Qwen3-8B\n{keys}", "trinity.yaml")
    assert str(caught.value) == f"trinity.yaml: line 4: key {named} appears twice"
