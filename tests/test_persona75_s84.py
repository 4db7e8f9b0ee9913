"""A scheduler team's library use of rft-solver (persona75, s84): `solver.trinity.check_trinity_config` and
`trinity_config_problems` refuse arguments of the wrong kind in one line (a `QueryError` naming the argument), as the
rest of the API does, where they raised a bare `AttributeError` or `TypeError`, or passed a config given as text or
None as checked; an output option of another tool given a format's name (``--output json``, ``-o yaml``) is told the
option that gives that format, not ``--out``, which wrote the fragment to a file named ``json``."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.tables import QueryError, load_catalog
from solver.trinity import check_trinity_config, load_config_mapping, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "trinity.yaml"
PLAN = ("--model", "8B", "--len", "32768", "--gpus", "4", "--gpu", "h20")


def _arguments() -> tuple[dict[str, Any], Any]:
    """The example config as nested mappings, and its model."""
    return load_config_mapping(EXAMPLE.read_text(), "trinity.yaml"), load_catalog().model("Qwen3-8B")


@pytest.mark.parametrize("check", [check_trinity_config, trinity_config_problems])
@pytest.mark.parametrize(("changed", "words"), [
    ({"model": "Qwen3-8B"}, "model must be a Model, got 'Qwen3-8B'"),
    ({"trainer_gpus": "4"}, "trainer_gpus must be a whole number, got '4' (a str: pass 4)"),
    ({"trainer_gpus": 4.0}, "trainer_gpus must be a whole number, got 4.0 (a float: pass 4)"),
    ({"mapping": None}, "mapping must be a Mapping, got None"),
    ({"environ": [("A", "B")]}, "environ must be a Mapping or None, got [('A', 'B')]"),
    ({"max_model_len": "32 kB"}, ("max_model_len must be a whole number or None, got '32 kB' (tokens, or thousands of "
                                  "1024: 32768 or 32k)")),
    ({"train_batch_size": 25.6}, "train_batch_size must be a whole number or None, got 25.6"),
])
def test_config_checks_refuse_arguments_of_the_wrong_kind_in_one_line(check: Callable[..., Any],
                                                                      changed: dict[str, Any], words: str):
    mapping, model = _arguments()
    arguments = {"mapping": mapping, "model": model, "trainer_gpus": 4, "environ": os.environ} | changed
    with pytest.raises(QueryError) as raised:
        check(arguments.pop("mapping"), arguments.pop("model"), arguments.pop("trainer_gpus"), **arguments)
    assert str(raised.value) == words


def test_config_checks_refuse_a_config_given_as_its_text():
    _, model = _arguments()
    with pytest.raises(QueryError, match=r"^mapping must be a Mapping, got '# A Trinity-RFT config"):
        check_trinity_config(EXAMPLE.read_text(), model, 4)


def test_config_checks_still_check_good_arguments():
    mapping, model = _arguments()
    assert check_trinity_config(mapping, model, 4, environ=os.environ) == []
    assert check_trinity_config(mapping, model, 0) == ["the trainer needs at least 1 GPU, got 0"]  # a problem


@pytest.mark.parametrize(("given", "meant"), [
    (("--output", "json"), "--json"), (("--output=json",), "--json"), (("-o", "json"), "--json"),
    (("--OUTPUT", "JSON"), "--json"), (("--output", "yaml"), "--emit trinity"),
    (("--output-file", "trinity"), "--emit trinity"), (("--output", "plan.yaml"), "--out"),
])
def test_an_output_option_given_a_format_is_told_that_formats_option(cli: Cli, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     given: tuple[str, ...], meant: str):
    monkeypatch.chdir(tmp_path)
    status, out, err = cli(*PLAN, *given)
    assert (status, out, err.splitlines()[-1]) == (
        2, "", f"solve: error: unrecognized arguments: {' '.join(given)} (did you mean {meant}?)")
    assert list(tmp_path.iterdir()) == []


def test_a_cluster_output_option_given_yaml_is_told_emit_dir(cli: Cli):
    status, _, err = cli("cluster", str(EXAMPLE.parent / "fleet.yaml"), "--output", "yaml")
    assert (status, err.splitlines()[-1]) == (
        2, "solve cluster: error: unrecognized arguments: --output yaml (did you mean --emit-dir?)")


THOUSANDS = " (Trinity reads no thousands of 1024: write {})"


@pytest.mark.parametrize(("written", "hint"), [
    ("32k", THOUSANDS.format(32768)), ("40 K", THOUSANDS.format(40960)), ("lots", ""), ("1.5k", ""),
])
def test_a_configs_length_in_thousands_is_told_the_number_to_write(cli: Cli, tmp_path: Path, written: str, hint: str):
    config = tmp_path / "team.yaml"
    config.write_text(EXAMPLE.read_text().replace("max_model_len: 32768", f"max_model_len: {written}"))
    status, out, err = cli("--from-config", str(config), "--gpu", "h20")
    refusal = f"solve: error: --from-config {config}: model.max_model_len must be a whole number, got '{written}'"
    assert (status, out, err) == (2, "", f"{refusal}{hint}\n")
