"""Messages pinned word for word before the functions that say them were split (session 59, complexity): every hint
a cluster file's validation error may carry (`_validation_message`, now one hint function per mistake), every check
of a table's models and rows (`Table._check_rows`), solve cluster's --emit-dir that cannot be looked at
(`run_cluster`), and ``solve -h COMMAND`` (`main`). Each passed on the old code as it is here (a pool's host_ram_gb
as session 62 reads it, as --host-ram does, excepted)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest

from solver.tables import TableError, load_catalog, load_fleet, load_gpu_type
from solver.tables.schema import OWN_MODEL_IN_CELLS

CATALOG = load_catalog()
MODELS = CATALOG.models

POOL = "name: a, gpu: a100, nodes: 1, gpus_per_node: 8"
JOB = "name: j, model: 4B, max_model_len: 4096"
POOL_FIELDS = ("fields: name, gpu, nodes, gpus_per_node, host_ram_gb, gpu_memory_gb, gpu_memory_mib, "
               "gpu_interconnect, node_interconnect, down")
JOB_FIELDS = ("fields: name, max_model_len, rollout_gpus, priority, pool, required, train_batch_size, lora_rank, "
              "lora_targets, lora_exclude_modules, reference_model, critic, dpo, trinity_version, model, model_config")

MESSAGES = [
    # A field missing: the mapping's fields; one given under another name: the unknown one beside it.
    ("[{name: a, nodes: 1, gpus_per_node: 8}]", JOB, f"line 1: pool a: missing field 'gpu' ({POOL_FIELDS})"),
    ("[{name: a, gpu_type: a100, nodes: 1, gpus_per_node: 8}]", JOB,
     f"line 1: pool a: unknown field 'gpu_type' (did you mean gpu? {POOL_FIELDS})"),
    # An unknown field in another mapping says nothing of the missing one: the missing field is said.
    ("[{name: a, nodes: 1, gpus_per_node: 8}]", f"{JOB}, colour: red",
     f"line 1: pool a: missing field 'gpu' ({POOL_FIELDS}) (and 1 more problem, at 'job j, colour' (line 2))"),
    # An unknown field close to one, one the placement chooses, one like none.
    ("[{name: a, gpu: a100, node: 1, gpus_per_node: 8}]", JOB,
     f"line 1: pool a: unknown field 'node' (did you mean nodes? {POOL_FIELDS})"),
    (f"[{{{POOL}}}]", f"{JOB}, sp: 2",
     ("line 2: job j: unknown field 'sp' (the placement chooses a job's trainer GPUs, nodes and settings; "
      f"rollout_gpus keeps GPUs for its explorer; {JOB_FIELDS})")),
    (f"[{{{POOL}}}]", f"{JOB}, colour: red", f"line 2: job j: unknown field 'colour' ({JOB_FIELDS})"),
    # Exponent notation YAML 1.1 reads as text: the number to write, or what that number breaks.
    ("[{name: a, gpu: a100, nodes: 1e1, gpus_per_node: 8}]", JOB,
     "line 1: pool a, nodes: must be a whole number, got '1e1' (YAML reads it as text: write 10)"),
    ("[{name: a, gpu: a100, nodes: 1e9, gpus_per_node: 8}]", JOB,
     ("line 1: pool a, nodes: must be a whole number, got '1e9' (YAML reads it as text, and as a number it must be at "
      "most 65536)")),
    ("[{name: a, gpu: a100, nodes: 2.5e0, gpus_per_node: 8}]", JOB,
     ("line 1: pool a, nodes: must be a whole number, got '2.5e0' (YAML reads it as text, and as a number it must be a "
      "whole number)")),
    # A pool's host memory is read as --host-ram reads it since session 62 (1e3, '512' and 2TB are taken): its bound.
    (f"[{{{POOL}, host_ram_gb: 1e9}}]", JOB,
     "line 1: pool a, host_ram_gb: must be above 0 and at most 49152 GB, got 1e9"),
    # A number in quotes.
    (f"[{{{POOL}}}]", f"{JOB}, train_batch_size: '256'",
     ("line 2: job j, train_batch_size: must be a whole number, got '256' (quoted, YAML reads it as text: write it "
      "without quotes)")),
    (f"[{{{POOL}}}]", "name: j, model: 4B, max_model_len: '4096'",
     ("line 2: job j, max_model_len: must be a whole number, got '4096' (quoted, YAML reads it as text: write it "
      "without quotes)")),
    (f"[{{{POOL}}}]", f"{JOB}, priority: '5'",
     ("line 2: job j, priority: must be a whole number from 1 to 1000000, got '5' (quoted, YAML reads it as text: "
      "write it without quotes)")),
    # A job's length in neither form it takes.
    (f"[{{{POOL}}}]", "name: j, model: 4B, max_model_len: 32kb",
     ("line 2: job j, max_model_len: must be a whole number, got '32kb' (tokens, or thousands of 1024: 32768 or "
      "32k)")),
    (f"[{{{POOL}}}]", "name: j, model: 4B, max_model_len: {at_least: 32.5k}",
     ("line 2: job j, max_model_len, at_least: must be a whole number, got '32.5k' (tokens, or thousands of 1024: "
      "32768 or 32k)")),
    # A priority as a word; a word where a number is asked and no hint fits.
    (f"[{{{POOL}}}]", f"{JOB}, priority: high",
     ("line 2: job j, priority: must be a whole number from 1 to 1000000, got 'high' (a weight: the placement places "
      "the most total priority)")),
    ("[{name: a, gpu: a100, nodes: two, gpus_per_node: 8}]", JOB,
     "line 1: pool a, nodes: must be a whole number, got 'two'"),
    # A priority that is no whole number: the range and what it weighs, as a word's; a host memory that is no number:
    # no hint of words or units or MiB.
    (f"[{{{POOL}}}]", f"{JOB}, priority: 1.5", ("line 2: job j, priority: must be a whole number from 1 to 1000000, "
                                                "got 1.5 (a weight: the placement places the most total priority)")),
    (f"[{{{POOL}, host_ram_gb: [1]}}]", JOB, "line 1: pool a, host_ram_gb: must be a number, got [1]"),
    # GPU memory with its unit; nvidia-smi's MiB as GB (beyond any GPU's MiB: no hint).
    ("[{name: a, gpu: x1, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 48GB}]", JOB,
     ("line 1: pool a, gpu_memory_gb: must be a whole number, got '48GB' (GB as sold, as a number: 48 for 48 GB; "
      "nvidia-smi's total in MiB goes in gpu_memory_mib)")),
    ("[{name: a, gpu: x1, nodes: 1, gpus_per_node: 8, gpu_memory_mib: 49152MiB}]", JOB,
     ("line 1: pool a, gpu_memory_mib: must be a whole number, got '49152MiB' (nvidia-smi's total in MiB, as a number: "
      "49152)")),
    ("[{name: a, gpu: x1, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 80 GiB}]", JOB,
     ("line 1: pool a, gpu_memory_gb: must be a whole number, got '80 GiB' (GB as sold, as a number: 80 for 80 GB; "
      "nvidia-smi's total in MiB goes in gpu_memory_mib)")),
    ("[{name: a, gpu: x1, nodes: 1, gpus_per_node: 8, gpu_memory_mib: lots}]", JOB,
     ("line 1: pool a, gpu_memory_mib: must be a whole number, got 'lots' (nvidia-smi's total in MiB, as a number: "
      "81559)")),
    ("[{name: a, gpu: x1, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 49152}]", JOB,
     ("line 1: pool a, gpu_memory_gb: must be at most 4096, got 49152 (no GPU has 49152 GB; if it is nvidia-smi's "
      "total in MiB, 48.0 GiB, give gpu_memory_mib: 49152)")),
    ("[{name: a, gpu: x1, nodes: 1, gpus_per_node: 8, gpu_memory_gb: 99999999}]", JOB,
     "line 1: pool a, gpu_memory_gb: must be at most 4096, got 99999999"),
    # Text YAML reads, unquoted, as another type (a name is its text as written: test_smallslips18_s74).
    ("[{name: a, gpu: on, nodes: 1, gpus_per_node: 8}]", JOB,
     ("line 1: pool a, gpu: must be text, got true (YAML reads it, unquoted, as true or false: quote it to keep it as "
      "text)")),
    ("[{name: a, gpu: 1.5, nodes: 1, gpus_per_node: 8}]", JOB,
     "line 1: pool a, gpu: must be text, got 1.5 (YAML reads it, unquoted, as a number: quote it to keep it as text)"),
    # A validator's own words; a list where a number is; a number where a list is.
    (f"[{{{POOL}}}]", f"{JOB}, model_config: x", "line 2: job j: model and model_config both name the model: give one"),
    (f"[{{{POOL}}}]", f"{JOB}, rollout_gpus: [1]", "line 2: job j, rollout_gpus: must be a whole number, got [1]"),
    ("3", JOB, "line 1: pools: must be a list, got 3"),
    # The other problems, by place, after the first.
    (("[{name: a, gpu: a100, nodes: -1, gpus_per_node: 0, host_ram_gb: 0}, "
      "{name: b, gpu: a100, nodes: -1, gpus_per_node: 8}]"),
     "name: j, model: 4B, max_model_len: 0",
     ("line 1: pool a, nodes: must be at least 0, got -1 (and 4 more problems, at 'pool a, gpus_per_node' (line 1), "
      "'pool a, host_ram_gb' (line 1), 'pool b, nodes' (line 1), ...)")),
    (f"[{{{POOL}}}]", "name: j, model: 4B, max_model_len: {exactly: 4096}",
     ("line 2: job j, max_model_len: unknown field 'exactly' (fields: at_least, at_most) (and 1 more problem, at 'job "
      "j, max_model_len, at_least' (line 2))")),
]
"""(a cluster file's pools, its one job, the message after the file's path): every branch of the old hint chain."""


@pytest.mark.parametrize(("pools", "job", "message"), MESSAGES)
def test_each_hint_of_a_cluster_files_validation_error_is_said_as_before(tmp_path: Path, pools: str, job: str,
                                                                         message: str):
    path = tmp_path / "fleet.yaml"
    path.write_text(f"pools: {pools}\njobs: [{{{job}}}]\n", encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == f"{path}: {message}"


KNOWN = ", ".join(model.name for model in MODELS)
"""The catalogue's models, as a table's unknown model is told them."""
PAIR = "[Qwen3-0.6B, Qwen3-4B]"
CELLS = "{Qwen3-0.6B: vanilla, Qwen3-4B: Env}"

TABLE_MESSAGES = [
    (2, "[]", "[{max_model_len: 4096, cells: {}}]", "the table names no models"),
    (2, "[Qwen3-9B]", "[{max_model_len: 4096, cells: {Qwen3-9B: vanilla}}]",
     f"unknown model 'Qwen3-9B' in the table's models (known: {KNOWN}; {OWN_MODEL_IN_CELLS})"),
    (2, "[Qwen3-0.6B, qwen3-4]", "[{max_model_len: 4096, cells: {Qwen3-0.6B: vanilla, qwen3-4: vanilla}}]",
     f"unknown model 'qwen3-4' in the table's models (did you mean Qwen3-4B?) (known: {KNOWN}; {OWN_MODEL_IN_CELLS})"),
    (2, "[Qwen3-0.6B, Qwen3-4B, Qwen3-0.6B]", f"[{{max_model_len: 4096, cells: {CELLS}}}]",
     "Qwen3-0.6B is named twice in the table's models"),
    (2, PAIR, "[]", "the table has no rows"),
    (2, PAIR, f"[{{max_model_len: 4096, cells: {CELLS}}}, {{max_model_len: 4096, cells: {CELLS}}}]",
     "duplicate row max_model_len=4096"),
    (2, PAIR, f"[{{max_model_len: 8192, cells: {CELLS}}}, {{max_model_len: 4096, cells: {CELLS}}}]",
     "row max_model_len=4096 comes after max_model_len=8192; rows must increase"),
    (2, PAIR, "[{max_model_len: 4096, cells: {Qwen3-0.6B: vanilla, Qwen3-4B: Env, Qwen3-9B: vanilla}}]",
     ("row max_model_len=4096: cell for 'Qwen3-9B', which is not among the table's models (Qwen3-0.6B, Qwen3-4B): "
      "add it to models, or drop the cell")),
    # a model the catalogue knows, left out of the table's models, was called an unknown model
    (2, PAIR, "[{max_model_len: 4096, cells: {Qwen3-0.6B: vanilla, Qwen3-4B: Env, Qwen3-8B: Env}}]",
     ("row max_model_len=4096: cell for 'Qwen3-8B', which is not among the table's models (Qwen3-0.6B, Qwen3-4B): "
      "add it to models, or drop the cell")),
    (2, PAIR, "[{max_model_len: 4096, cells: {Qwen3-0.6B: vanilla}}]",
     ("row max_model_len=4096: no cell for Qwen3-4B (a row gives every model of its table a cell: the first setting "
      "that trained, or '-' where none did; no cell says 'not measured', so give rows only at lengths where you "
      "measured every model of the table)")),
    (1, "[Qwen3-0.6B]", "[{max_model_len: 4096, cells: {Qwen3-0.6B: SP=2}}]",
     "row max_model_len=4096, Qwen3-0.6B: SP=2 does not divide the table's 1 GPU (it takes no SP)"),
    (8, "[Qwen3-0.6B]", "[{max_model_len: 4096, cells: {Qwen3-0.6B: SP=3}}]",
     "row max_model_len=4096, Qwen3-0.6B: SP=3 does not divide the table's 8 GPUs (it takes SP=2, SP=4 or SP=8)"),
]
"""(a table's GPUs, its models, its rows, the message after the file's path and ``table gpus=N: ``), one per check of
a table's models and rows, pinned before `Table._check_rows` was split."""


@pytest.mark.parametrize(("gpus", "models", "rows", "message"), TABLE_MESSAGES)
def test_each_check_of_a_tables_models_and_rows_is_said_as_before(tmp_path: Path, gpus: int, models: str, rows: str,
                                                                  message: str):
    path = tmp_path / "cells.yaml"
    path.write_text("gpu: Test-GPU\nmemory_gb: 80\nsource: {document: test fixture, section: test}\ntables:\n"
                    f"  - {{gpus: {gpus}, section: s, models: {models}, rows: {rows}}}\n", encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_gpu_type(path, MODELS)
    assert str(caught.value) == f"{path}: table gpus={gpus}: {message}"


@pytest.mark.parametrize(("error", "said"), [
    (PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
    (OSError("no such thing here"), "no such thing here"),  # an error without strerror: its own words
])
def test_an_emit_dir_that_cannot_be_looked_at_is_refused_before_the_placement(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, said: str):
    # A folder on the way without search permission (Path.is_dir raises there before Python 3.14; root is never
    # refused, so the refusal is the file system's, stood in for here): one line, exit 2, no folder made.
    blocked = tmp_path / "blocked"
    is_dir = Path.is_dir

    def refused_under_blocked(path: Path) -> bool:
        if blocked in (path, *path.absolute().parents):
            raise error
        return is_dir(path)

    monkeypatch.setattr(Path, "is_dir", refused_under_blocked)
    fleet = Path(__file__).parents[1] / "docs" / "examples" / "fleet.yaml"
    status, out, err = cli("cluster", str(fleet), "--emit-dir", str(blocked / "configs"))
    assert (status, out) == (2, "")
    assert err == f"solve cluster: error: --emit-dir {blocked / 'configs'}: cannot write: {said}\n"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", ["tables", "cluster", "calibrate", "memory", "map", "examples"])
def test_help_before_a_command_is_that_commands_help(cli, command: str):
    # solve -h map: map's help, as solve map -h gives it (main reorders the two), untested before main was split.
    own = cli(command, "-h")
    assert own[0] == 0 and own[1].startswith(f"usage: solve {command} ")
    assert cli("-h", command) == cli("--help", command) == own


def test_help_before_a_word_that_is_no_command_is_the_planners(cli):
    assert cli("-h", "plan") == cli("-h")
    assert cli("-h")[:1] == (0,) and cli("-h")[1].startswith("usage: solve [-h]")
