"""A team lead's capacity plan (persona83, s85): a cluster file's number written with thousands separators in a
``{...}`` entry (``max_model_len: 131,072``, which YAML reads as 131 and a field ``'072'``) is told so, not only as an
unknown field; a job's length written as a range is told the mapping a range is; a ``--weights`` file given a price
is told that the weights price no GPU type, and how GPU types are compared; `--explain` names the table that stops an
estimate where a question has no plan left and the memory model fits the nearest (docs/memory.md says it does)."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]
FLEET = ("pools:\n  - {{name: p, gpu: H200, nodes: 1, gpus_per_node: 8{pool}}}\n"
         "jobs:\n  - {{name: j, model: 8B, {job}}}\n")
JOB_FIELDS = ("name, max_model_len, rollout_gpus, priority, pool, required, train_batch_size, lora_rank, lora_targets, "
              "lora_exclude_modules, reference_model, critic, dpo, trinity_version, model, model_config")
POOL_FIELDS = ("name, gpu, nodes, gpus_per_node, host_ram_gb, gpu_memory_gb, gpu_memory_mib, gpu_interconnect, "
               "node_interconnect, down")
FORMS = "tokens, or thousands of 1024: 32768 or 32k"


def _refusal(cli: Cli, tmp_path: Path, job: str, pool: str = "") -> tuple[int, str, str]:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET.format(pool=pool, job=job), encoding="utf-8")
    status, out, err = cli("cluster", str(fleet))
    return status, out, err.removeprefix(f"solve cluster: error: {fleet}: ")


@pytest.mark.parametrize(("job", "pool", "message"), [
    ("max_model_len: 131,072, rollout_gpus: 4", "",
     ("line 4: job j: unknown field '072' (max_model_len: 131,072, in a {...} entry, is read as max_model_len: 131 and "
      f"a field '072': write max_model_len: 131072, without commas; fields: {JOB_FIELDS})")),
    # every group is named once, and the others are no further problem
    ("max_model_len: 1,048,576", "",
     ("line 4: job j: unknown field '048' (max_model_len: 1,048,576, in a {...} entry, is read as max_model_len: 1 and "
      f"fields '048', '576': write max_model_len: 1048576, without commas; fields: {JOB_FIELDS})")),
    ("max_model_len: 32k", ", host_ram_gb: 1,024",
     ("line 2: pool p: unknown field '024' (host_ram_gb: 1,024, in a {...} entry, is read as host_ram_gb: 1 and a "
      f"field '024': write host_ram_gb: 1024, without commas; fields: {POOL_FIELDS})")),
    # a field of three digits after a length written otherwise, or first, is no number split by a comma
    ("max_model_len: 32k, 123: 4", "", f"line 4: job j: unknown field '123' (fields: {JOB_FIELDS})"),
])
def test_a_number_with_thousands_separators_in_a_flow_entry_is_told_so(cli: Cli, tmp_path: Path, job: str, pool: str,
                                                                       message: str):
    assert _refusal(cli, tmp_path, job, pool) == (2, "", message + "\n")


@pytest.mark.parametrize(("length", "hint"), [
    ("[32k, 128k]", f" ({FORMS}; a range is a mapping: {{at_least: 32k, at_most: 128k}})"),
    ("32k-128k", f" ({FORMS}; a range is a mapping: {{at_least: 32k, at_most: 128k}})"),
    ("32k to 128k", f" ({FORMS}; a range is a mapping: {{at_least: 32k, at_most: 128k}})"),
    ("[32768, 131072]", f" ({FORMS}; a range is a mapping: {{at_least: 32768, at_most: 131072}})"),
    # one length, or an end that is none, is no range
    ("[32k]", f" ({FORMS})"),
    ("32k-", f" ({FORMS})"),
])
def test_a_jobs_length_written_as_a_range_is_told_the_mapping_a_range_is(cli: Cli, tmp_path: Path, length: str,
                                                                         hint: str):
    status, out, message = _refusal(cli, tmp_path, f"max_model_len: {length}")
    assert (status, out) == (2, "")
    assert message.startswith("line 4: job j, max_model_len: must be a whole number, got ")
    assert message.endswith(f"{hint}\n")


@pytest.mark.parametrize(("length", "least"), [
    ("'>=32k'", "32k"), ("'>= 32768'", "32768"), ("≥32k", "32k"), ("32k+", "32k"), ("at least 32k", "32k"),
    ("64k or more", "64k"),
])
def test_a_jobs_length_written_as_at_least_one_is_told_the_at_least_mapping(cli: Cli, tmp_path: Path, length: str,
                                                                            least: str):
    # persona90a: '>=32k' was told only a length's two forms, not the {at_least: N} that says it
    status, out, message = _refusal(cli, tmp_path, f"max_model_len: {length}")
    assert (status, out) == (2, "")
    assert message.endswith(f" ({FORMS}; for at least {least}, longer where a plan allows: {{at_least: {least}}})\n")


@pytest.mark.parametrize("length", ["'>=abc'", "32k-", "'>=1M'"])
def test_a_length_after_at_least_words_that_is_none_gets_no_at_least_mapping(cli: Cli, tmp_path: Path, length: str):
    assert "at_least" not in _refusal(cli, tmp_path, f"max_model_len: {length}")[2]


def test_an_at_least_written_as_a_range_is_not_told_to_write_a_range(cli: Cli, tmp_path: Path):
    assert _refusal(cli, tmp_path, "max_model_len: {at_least: [32k, 64k]}") == (
        2, "", f"line 4: job j, max_model_len, at_least: must be a whole number, got ['32k', '64k'] ({FORMS})\n")


@pytest.mark.parametrize("command", [("--model", "8B", "--len", "32k"), ("map", "--gpu", "h200", "--model", "8B")])
@pytest.mark.parametrize("field", ["price_per_gpu", "cost_per_hour", "gpu_hour_price"])
def test_a_price_in_a_weights_file_is_told_the_weights_price_no_gpu_type(cli: Cli, tmp_path: Path,
                                                                         command: tuple[str, ...], field: str):
    weights = tmp_path / "weights.yaml"
    weights.write_text(f"offload: 1.0\n{field}: 3\n", encoding="utf-8")
    prog = "solve map" if command[0] == "map" else "solve"
    assert cli(*command, "--weights", str(weights)) == (2, "", (
        f"{prog}: error: --weights {weights}: unknown field '{field}' (a weights file has no price: a cost is a "
        "relative step time, from a plan's GPUs and settings, not a GPU type's speed or price; to compare GPU types, "
        "solve --gpu a100,h200 answers for each, and solve cluster --buy names the fewest GPUs to buy; fields: "
        "offload, sp, env, offload_moe_scaling, sp_pcie_factor, critic)\n"))


def test_explain_names_the_table_that_stops_an_estimate_where_no_plan_is_left(cli: Cli):
    # The memory model fits Env alone on 8 A100s at 29696 tokens (up to 30720), but the 1-GPU table's '-' at 32768
    # stops it (docs/memory.md, "When an estimate stands in"): --explain says so, where it named nothing.
    status, out, _ = cli("--model", "0.6B", "--len", "29696", "--gpu", "A100-80GB", "--gpus", "8", "--exact",
                         "--sp", "1", "--no-offload", "--explain")
    assert status == 1
    assert " ".join(out.split()).count(
        "nothing in the tables and the memory model's estimates vouches for Qwen3-0.6B on A100-80GB at 29696 tokens "
        "within the limits above (Env on 8 GPUs: the memory model predicts 70.8 GiB of 73.5 usable, but the A100-80GB "
        "table for 1 GPU says it ran out of memory at 32768, and with Offload each GPU holds as much on any count, "
        "without it more)") == 1


def test_explain_names_another_gpu_types_cells_that_stop_an_estimate(cli: Cli, tmp_path: Path):
    # A team lead's own H200 cells, far apart: '-' at 131072 on 8 GPUs stops every setting of Qwen3-32B on fewer
    # GPUs of less memory up to 131072 (the row a length between falls to), on more GPUs too (with Offload, as much
    # per GPU on any count); --explain names that cell, not only that nothing vouches.
    cells = tmp_path / "h200-cells.yaml"
    cells.write_text("gpu: H200\nmemory_gb: 141\nsource: our H200 runs\ntables:\n  - gpus: 8\n"
                     "    section: 8 x H200\n    models: [Qwen3-32B]\n    rows:\n"
                     "      - {max_model_len: 32768, cells: {Qwen3-32B: Env + SP=2}}\n"
                     "      - {max_model_len: 131072, cells: {Qwen3-32B: '-'}}\n", encoding="utf-8")
    status, out, _ = cli("--model", "32B", "--len", "40k", "--gpu", "A100-80GB", "--gpus", "64", "--exact",
                         "--sp", "8", "--no-offload", "--cells", str(cells), "--explain")
    assert status == 1
    assert ("(Env + SP=8 on 64 GPUs: the memory model predicts 31.8 GiB of 73.5 usable, but the H200-141GB table for "
            "8 GPUs, whose GPU has at least this one's memory, says it ran out of memory at 131072, and with Offload "
            "each GPU holds as much on any count, without it more)") in " ".join(out.split())
