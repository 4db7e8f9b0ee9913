"""`solve cluster --estimate` places plans from the memory model alone (s66): a placed plan whose setting a table says
ran out of memory on its GPUs at its length (its GPU type's, or one's with at least its memory) is cautioned
(`tables-say-out-of-memory`), in the words of `solve --estimate`'s ``tables`` row, in the text, the JSON, the emitted
config's header and the API's `place`. Before, nothing under the placement said so."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from test_clusterbuy_s60 import fleet_file

import solver

Q4 = {"name": "q4", "model": "Qwen3-4B", "max_model_len": {"at_least": 65536}, "rollout_gpus": 4}
SHORT = {"name": "short", "model": "Qwen3-4B", "max_model_len": 16384, "rollout_gpus": 0}
A100 = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 1024}],
        "jobs": [Q4]}
H100 = {"pools": [{"name": "h100", "gpu": "H100-80GB", "nodes": 2, "gpus_per_node": 8, "host_ram_gb": 1024}],
        "jobs": [Q4, SHORT]}
"""Qwen3-4B at least 65536 tokens beside 4 rollout GPUs: the estimates alone place Env + Offload + SP=4 on 4 GPUs at
110592, where the A100-80GB table for 4 GPUs says '-' at 112640 (on H100s too: an A100-80GB has at least an H100's
memory); the short job's Env on 8 H100s at 16384 is one the tables do not refute."""

CAUTION = ("estimated from the memory model alone, but the tables say it runs out of memory (the A100-80GB table for 4 "
           "GPUs{larger} says '-' at 112640: the source's cells read as the first setting that trained in their order, "
           "'-' where none did, so this setting, or one that includes it, ran out of memory there); the table, a "
           "measurement, decides: drop {option} to plan with it")
CODE = "tables-say-out-of-memory"
PLAN = (True, True, 4, 4, 110592, "estimated")
"""Env, Offload, SP, trainer GPUs, length and evidence of q4's placed plan."""


def test_the_text_cautions_a_placed_plan_the_a100_table_refutes(cli: Callable[..., tuple[int, str, str]],
                                                                tmp_path: Path):
    status, out, err = cli("cluster", str(fleet_file(A100, tmp_path)), "--estimate")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert "│ 0     │ all  │ q4  │       4 │       4 │ Env + Offload + SP=4 │ 110592 (≥65536) │" in lines[5]
    # The estimate's predicted memory, under the table (smallslips23_s76).
    assert lines[8] == "q4: 73.0 GiB per GPU predicted, 0.6 GiB to spare (memory model)"
    assert lines[10:] == [
        ("caution: q4: estimated from the memory model alone, but the tables say it runs out of memory (the A100-80GB "
         "table for 4 GPUs says '-' at 112640: the source's"),
        ("cells read as the first setting that trained in their order, '-' where none did, so this setting, or one "
         "that includes it, ran out of memory there); the table,"),
        "a measurement, decides: drop --estimate to plan with it"]


def test_the_json_and_the_emitted_config_carry_the_caution(cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    path, emitted = str(fleet_file(A100, tmp_path)), tmp_path / "configs"
    status, out, err = cli("cluster", path, "--estimate", "--json", "--emit-dir", str(emitted))
    assert (status, err) == (0, "")
    (placement,) = json.loads(out)["placements"]
    plan = placement["plan"]
    assert tuple(plan[key] for key in ("env", "offload", "sp", "gpus", "max_model_len", "evidence")) == PLAN
    assert (plan["cautions"], plan["caution_codes"]) == ([CAUTION.format(larger="", option="--estimate")], [CODE])
    header = (emitted / "q4.yaml").read_text(encoding="utf-8").splitlines()
    start = header.index("# caution: estimated from the memory model alone, but the tables say it runs out of "
                         "memory (the")
    assert header[start + 1:start + 5] == [
        "# A100-80GB table for 4 GPUs says '-' at 112640: the source's cells read as the first setting that",
        "# trained in their order, '-' where none did, so this setting, or one that includes it, ran out of",
        "# memory there); the table, a measurement, decides: drop --estimate to plan with it",
        "#"]


def test_with_the_tables_the_same_job_has_no_such_caution(cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    status, out, err = cli("cluster", str(fleet_file(A100, tmp_path)), "--json")
    (placement,) = json.loads(out)["placements"]
    assert (status, err, placement["plan"]["evidence"]) == (0, "", "documented")
    assert CODE not in placement["plan"]["caution_codes"]


def test_the_api_cautions_it_on_h100s_by_the_a100_table_in_its_own_words(tmp_path: Path):
    result = solver.place(fleet_file(H100, tmp_path), estimate="only")
    placed = {placement.job: placement.plan for placement in result.placements}
    q4, short = placed["q4"], placed["short"]
    assert (q4.env, q4.offload, q4.sp, q4.gpus, q4.max_model_len, q4.evidence) == PLAN
    assert [code.value for code in q4.caution_codes] == [CODE]
    assert q4.cautions == (CAUTION.format(larger=" (its GPU has at least the memory of H100-80GB)",
                                          option='estimate="only"'),)
    assert (short.setting.label, short.gpus, short.max_model_len) == ("Env", 8, 16384)
    assert CODE not in short.caution_codes  # the tables refute it nowhere
