"""Tests for session 62's smallfix2: a key YAML 1.1 reads as no text (``true: 3``) is named as written; a node's host
memory is read by one rule wherever a person writes it (``--host-ram``, a cluster file's ``host_ram_gb``: a bare number
is GB up to 4096, more needs its unit); --write's host memory note is wrapped as its other notes are; ``--buy`` says
that only the file's pools grow."""

from __future__ import annotations

from pathlib import Path

import pytest
from option_reference import option_reference

from solver import plan
from solver.cli.argtypes import host_memory
from solver.tables import BARE_HOST_RAM_GB, Pool, TableError, load_catalog, load_fleet, load_weights
from solver.trinity.plan_keys import COMMENT_WIDTH

ROOT = Path(__file__).resolve().parents[1]
CATALOG = load_catalog()
POOL_FIELDS = ("name, gpu, nodes, gpus_per_node, host_ram_gb, gpu_memory_gb, gpu_memory_mib, gpu_interconnect, "
               "node_interconnect, down")
JOB = "jobs: [{name: j, model: 4B, max_model_len: 4096}]\n"


def _fleet(tmp_path: Path, pool: str, jobs: str = JOB) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(f"pools:\n  - {{name: a, gpu: a100, nodes: 1, gpus_per_node: 8{pool}}}\n{jobs}", encoding="utf-8")
    return path


# 1. A key YAML 1.1 reads as true, a number, null or a date: named as written, with the fields the mapping takes.

def test_a_pools_key_true_is_named_as_written_in_one_line_exit_2(cli, tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - name: a100\n    gpu: A100-80GB\n    nodes: 1\n    gpus_per_node: 8\n    true: 3\n"
                    + JOB, encoding="utf-8")
    assert cli("cluster", str(path)) == (
        2, "", f"solve cluster: error: {path}: line 6: pool a100: unknown field 'true' (fields: {POOL_FIELDS})\n")


@pytest.mark.parametrize("key", ["on", "yes", "True", "1", "2.5", "null", "~", "2020-01-01", "0x10"])
def test_a_pools_key_of_another_type_is_the_unknown_field_written(tmp_path: Path, key: str):
    path = _fleet(tmp_path, f", {key}: 2")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == f"{path}: line 2: pool a: unknown field '{key}' (fields: {POOL_FIELDS})"


def test_a_jobs_and_the_top_levels_keys_of_another_type_are_named_as_written(tmp_path: Path):
    path = _fleet(tmp_path, "", "jobs: [{name: j, model: 4B, max_model_len: 4096, off: 1}]\nfalse: 1\n")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value) == (
        f"{path}: line 3: job j: unknown field 'off' (fields: name, max_model_len, rollout_gpus, priority, pool, "
        "required, train_batch_size, lora_rank, lora_targets, lora_exclude_modules, "
        "reference_model, critic, dpo, trinity_version, model, model_config) (and 1 more "
        "problem, at 'false' (line 4))")


def test_a_key_a_merge_brings_in_is_named_as_written_too(tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text("x-pool: &pool {gpu: a100, nodes: 1, gpus_per_node: 8, on: 1}\n"
                    "pools:\n  - <<: *pool\n    name: a\n" + JOB, encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_fleet(path, CATALOG)
    assert str(caught.value).startswith(f"{path}: line 1: pool a: unknown field 'on' (fields: {POOL_FIELDS})")


def test_a_key_written_twice_is_named_as_written(tmp_path: Path):
    path = tmp_path / "weights.yaml"
    path.write_text("offload: 1.0\nsp: 0.1\nenv: 0.01\nnull: 1\nnull: 2\n", encoding="utf-8")
    with pytest.raises(TableError) as caught:
        load_weights(path)
    assert str(caught.value) == f"{path}: line 5: key 'null' appears twice"


# 2. Host memory: one rule (`read_host_ram`) for --host-ram and a cluster file's host_ram_gb.

def _host_ram(tmp_path: Path, written: str) -> float | None:
    return load_fleet(_fleet(tmp_path, f", host_ram_gb: {written}"), CATALOG).pools[0].host_ram_gb


@pytest.mark.parametrize(("written", "gib"), [
    ("4096", 4096), ("1", 1), ("0.5", 0.5), ("'4096'", 4096), ("1e3", 1000), ("'1.0e+3'", 1000), ("2TB", 2048),
    ("6TB", 6144), ("6144GB", 6144), ("49152GB", 49152),
    ("64214MiB", 62.7), ("503Gi", 503), ("65849636kB", 62.7)])
def test_a_pools_host_ram_is_read_as_host_ram_reads_it(tmp_path: Path, written: str, gib: float):
    assert _host_ram(tmp_path, written) == gib == host_memory(written.strip("'"))


@pytest.mark.parametrize(("written", "problem"), [
    ("4097", ("a number without a unit is GB up to 4096, got 4097: give its unit, 4097MiB if it is free -m's total "
              "(4.0 GiB) or 4097GB if it is GB")),
    ("4096.5", "a number without a unit is GB up to 4096, got 4096.5: give its unit, 4096.5GB if it is GB"),
    ("31958", ("a number without a unit is GB up to 4096, got 31958: give its unit, 31958MiB if it is free -m's total "
               "(31.2 GiB) or 31958GB if it is GB")),
    ("515870", ("a number without a unit is GB up to 4096, got 515870: give its unit, 515870MiB if it is free -m's "
                "total (503.7 GiB)")),
    ("49153GB", "must be above 0 and at most 49152 GB, got 49153GB"),
    ("2 TiB x", ("expected 512, 512GB, 512GiB, 2TB, 503Gi (free -h), 515870MiB (free -m) or 528280000kB "
                 "(/proc/meminfo), got '2 TiB x'")),
])
def test_a_pools_host_ram_is_refused_as_host_ram_refuses_it(cli, tmp_path: Path, written: str, problem: str):
    path = _fleet(tmp_path, f", host_ram_gb: {written}")
    assert cli("cluster", str(path)) == (2, "", (f"solve cluster: error: {path}: line 2: pool a, host_ram_gb: "
                                                 f"{problem}\n"))
    status, _, err = cli("--model", "4B", "--gpu", "a100", "--len", "4096", "--host-ram", written)
    assert (status, err.splitlines()[-1]) == (2, f"solve: error: argument --host-ram: {problem}")


def test_python_numbers_of_host_memory_are_gib_up_to_49152(tmp_path: Path):
    # The API's host_ram_gb= and a Pool built in Python take the value --host-ram's forms read as (6TB: 6144).
    assert Pool(name="p", gpu="H100", nodes=1, gpus_per_node=8, host_ram_gb=6144.0).host_ram_gb == 6144
    (answer,) = plan("4B", gpu="a100", max_model_len=4096, budget_gpus=1, host_ram_gb=6144)
    assert answer.plans


def test_a_check_command_gives_host_ram_past_4096_with_its_unit(cli, tmp_path: Path):
    # --host-ram 6144 alone is refused (a bare number past 4096), so the command that checks a config says 6144GB.
    status, out, err = cli("--model", "4B", "--gpu", "a100", "--len", "4096", "--host-ram", "6TB", "--emit", "trinity")
    assert status == 0, err
    assert "#   solve --from-config CONFIG --check --gpu A100-80GB --host-ram 6144GB --critic none\n" in out
    assert host_memory("6144GB") == 6144 and BARE_HOST_RAM_GB == 4096
    status, out, err = cli("memory", "--model", "32B", "--gpu", "a100", "--gpus", "1", "--len", "131072",
                           "--host-ram", "6TB")
    assert status == 1, out
    assert out.endswith("  solve --model 32B --gpu a100 --gpus 1 --len 131072 --host-ram 6144GB\n")


# 3. --write's host memory note, wrapped at COMMENT_WIDTH as its other notes are, and replaced whole by a later --write.

def _two_node_config() -> str:
    """The example config on 2 nodes of 8 with 12 rollout GPUs: a plan whose trainer holds 1 of the 2 nodes, whose
    host memory note is the longest it writes."""
    text = (ROOT / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    return text.replace("node_num: 1", "node_num: 2").replace("engine_num: 2", "engine_num: 12")


NOTE = ("  # host memory: 203.4 GiB for Offload (at start-up, every rank loading the model; 183.0 while\n"
        "  #   training), per node the trainer runs on (1 of 2: the other holds only its rollout); not\n"
        "  #   checked: --host-ram not given\n"
        "  trainer_strategy: fsdp2\n")
"""Qwen3-8B's 4 trainer GPUs with Offload: the untied model loaded on each of them with no release named (s84, 4 x 30.5
GiB at start-up, more than training holds), the moments named, on three lines."""


def test_the_host_memory_note_is_wrapped_and_a_later_write_replaces_it_whole(cli, tmp_path: Path):
    config, first, second, third = (tmp_path / name for name in ("in.yaml", "a.yaml", "b.yaml", "c.yaml"))
    config.write_text(_two_node_config(), encoding="utf-8")
    flags = ("--gpu", "a100", "--len", "64k", "--offload")
    assert cli("--from-config", str(config), *flags, "--write", str(first))[0] == 0
    written = first.read_text(encoding="utf-8")
    assert NOTE in written
    assert all(len(line) <= COMMENT_WIDTH for line in NOTE.splitlines())
    assert cli("--from-config", str(first), *flags, "--write", str(second))[0] == 0
    assert second.read_text(encoding="utf-8") == written.replace(str(first), str(second))
    assert cli("--from-config", str(first), "--gpu", "a100", "--len", "32k", "--write", str(third))[0] == 0
    assert "host memory" not in third.read_text(encoding="utf-8")


def test_an_earlier_one_line_host_memory_note_is_replaced_and_a_users_comment_above_it_stays(cli, tmp_path: Path):
    config, out = tmp_path / "in.yaml", tmp_path / "out.yaml"
    text = _two_node_config().replace(
        "trainer:\n", "trainer:\n  # mine\n  # host memory: 1.0 GiB per node for Offload\n  trainer_strategy: fsdp\n")
    config.write_text(text, encoding="utf-8")
    assert cli("--from-config", str(config), "--gpu", "a100", "--len", "64k", "--offload", "--write", str(out))[0] == 0
    written = out.read_text(encoding="utf-8")
    assert "1.0 GiB" not in written
    assert "trainer:\n  # mine\n" + NOTE in written


def test_the_docs_say_a_comment_inside_a_flow_style_model_is_lost():
    docs = " ".join((ROOT / "docs" / "trinity.md").read_text(encoding="utf-8").split())
    assert "a comment of yours inside a `model: {...}` that spans several lines is lost" in docs


# 4. --buy grows the file's pools only.

def test_buy_says_only_the_files_pools_grow(cli):
    status, out, _ = cli("cluster", "--help")
    assert status == 0
    help_text = " ".join(out.split())
    assert "say the fewest GPUs, then nodes, to add to the file's pools with which every job" in help_text
    assert "only the file's pools grow (for a GPU type it lacks, add a pool of it with nodes: 0)" in option_reference()
    docs = " ".join((ROOT / "docs" / "cluster.md").read_text(encoding="utf-8").split())
    assert "**Only the fleet's pools grow.**" in docs and "Buying pools of new types is not built." in docs
