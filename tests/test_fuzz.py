"""Fuzzing, bounded to stay fast: random command lines and mutated or random input files never crash.
`benchmarks/fuzz.py` runs the same targets for longer."""

from __future__ import annotations

from fuzz_targets import (
    ARGVS,
    CONFIG_CHANGES,
    CONFIG_EDITS,
    DOCUMENTS,
    EDITS,
    load_changed_model_config,
    load_cluster_document,
    load_mutated_table,
    read_trinity_document,
    run_cli,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FAST
@given(argv=ARGVS)
def test_random_command_lines_end_with_0_1_or_2(argv: list[str]):
    run_cli(argv)


@FAST
@given(edits=EDITS)
def test_mutated_table_files_load_or_are_refused(edits, tmp_path_factory):
    load_mutated_table(edits, tmp_path_factory.mktemp("table"))


@FAST
@given(which=st.integers(min_value=0, max_value=99), changes=CONFIG_CHANGES, edits=CONFIG_EDITS)
def test_changed_model_configs_load_or_are_refused(which: int, changes, edits, tmp_path_factory):
    load_changed_model_config(which, changes, edits, tmp_path_factory.mktemp("config"))


@FAST
@given(text=DOCUMENTS)
def test_random_cluster_files_load_or_are_refused(text, tmp_path_factory):
    load_cluster_document(text, tmp_path_factory.mktemp("fleet"))


@FAST
@given(text=DOCUMENTS)
def test_random_trinity_configs_read_or_are_refused(text, tmp_path_factory):
    read_trinity_document(text, tmp_path_factory.mktemp("trinity"))
