"""Tests that kill hand-made mutants of s69's merges which the merges' own tests let live (s69 mutants15; the table:
/work/keep/review-s69-mutants15-table.md)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

import pytest
import yaml
from command_words import make_query
from test_cli_planner import ascii_cli  # noqa: F401 (a fixture)

import solver
import solver.cli.atomic
from solver.explain import explain
from solver.results import SINGLE_GPU_CAUTION_SHORT, Answer
from solver.solve import plan
from solver.tables import load_catalog

CATALOG = load_catalog()
EXAMPLES = Path(__file__).resolve().parent.parent / "docs" / "examples"

WHOLE_NODES = "span nodes of 8 (--node-gpus) but are not whole nodes, which a trainer that spans nodes must use"


def _reasons(**request: object) -> list[tuple[str, str]]:
    query = make_query(CATALOG, **{"estimate": "never", **request})
    (answer,) = plan(query, CATALOG)
    return [(reason.rule, reason.detail) for reason in explain(CATALOG, query, answer)]


def _after_longer(reasons: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return reasons[[rule for rule, _ in reasons].index("longer") + 1:]


def test_what_stops_a_longer_length_names_the_budget_itself_where_it_is_not_whole_nodes():
    # 12 A100s on nodes of 8: 9 to 12 are never weighed, the budget's own 12 among them; SP's rules on 5 to 7 GPUs
    # name them as a range too.
    reasons = _reasons(gpu="a100", model="0.6B", objective="max_len", budget_gpus=12)
    assert reasons.count(("whole_nodes", f"9-12 GPUs {WHOLE_NODES}")) == 2
    heads = "SP must divide the 16 attention heads of Qwen3-0.6B: that rules out SP=3, 5-7 (on 5-7 GPUs)"
    assert ("sp_divides_heads", heads) in reasons


def test_under_exact_no_count_is_said_to_break_the_whole_nodes_rule():
    # --exact 16: the counts below are ruled out by the budget alone (9 to 15 are no candidates, not whole nodes').
    after = _after_longer(_reasons(gpu="a100", model="0.6B", objective="max_len", budget_gpus=16, exact=True))
    assert [rule for rule, _ in after] == ["budget", "sp_divides_gpus", "sp_within_node", "no_estimates"]
    assert after[0] == ("budget", "1-8 GPUs: --exact asks for 16")


def test_a_rule_on_one_gpu_alone_names_it_in_the_singular():
    # 64 GiB: Qwen3-4B loads on 2 GPUs without Offload (51.1); Offload needs 93.4
    after = _after_longer(_reasons(gpu="a100", model="4B", objective="max_len", budget_gpus=2, host_ram_gb=64))
    words = ("Offload needs more host memory (the actor's states and the reference model's shards, or the model while "
             "it loads beside both models' pinned shards, whichever is more) than --host-ram 64 GiB (on 1 GPU: 93.4 "
             "GiB per node)")
    assert ("host_ram", words) in after


def test_trainer_counts_the_rollout_gpus_leave_no_layout_for_are_named_as_a_range():
    after = _after_longer(_reasons(gpu="a100", model="0.6B", objective="max_len", budget_gpus=16, rollout_gpus=4))
    words = ("5-7 trainer GPUs: with the 4 rollout GPUs (--rollout-gpus) they fit neither one node of 8, nor whole "
             "nodes with the trainer in one of them, nor with the trainer on whole nodes")
    assert ("rollout_layout", words) in after


def _failing(number: int) -> Callable[..., NoReturn]:
    def fail(*args: object, **kwargs: object) -> NoReturn:
        raise OSError(number, os.strerror(number))
    return fail


FRAGMENT = ("--model", "4B", "--len", "8k", "--gpus", "2", "--gpu", "h100", "--emit", "trinity", "--out")


@pytest.mark.parametrize(("number", "status"), [(errno.EIO, 74), (errno.EPERM, 2)], ids=["EIO", "EPERM"])
def test_a_rename_into_place_that_fails_exits_74_for_the_disk_and_2_for_the_file(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, number: int, status: int):
    target = tmp_path / "fragment.yaml"
    monkeypatch.setattr(solver.cli.atomic.os, "replace", _failing(number))
    assert cli(*FRAGMENT, str(target)) == (
        status, "", f"solve: error: --out {target}: cannot write: {os.strerror(number)}\n")
    assert list(tmp_path.iterdir()) == []


def test_a_temporary_file_that_a_full_disk_cannot_make_exits_74(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "fragment.yaml"
    monkeypatch.setattr(solver.cli.atomic.tempfile, "NamedTemporaryFile", _failing(errno.ENOSPC))
    message = (f"solve: error: --out {target}: cannot write: a temporary file cannot be created in {tmp_path} (No "
               "space left on device); the file is written there first, then renamed into place\n")
    assert cli(*FRAGMENT, str(target)) == (74, "", message)


def test_a_file_whose_status_cannot_be_read_for_an_io_error_exits_74(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    target = tmp_path / "fragment.yaml"
    monkeypatch.setattr(solver.cli.atomic, "not_a_regular_file", _failing(errno.EIO))
    assert cli(*FRAGMENT, str(target)) == (
        74, "", f"solve: error: --out {target}: cannot write: Input/output error\n")


def test_an_emit_dir_that_a_full_disk_cannot_make_exits_74(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "configs"
    monkeypatch.setattr(Path, "mkdir", _failing(errno.ENOSPC))
    assert cli("cluster", str(EXAMPLES / "fleet.yaml"), "--emit-dir", str(folder)) == (
        74, "", f"solve cluster: error: --emit-dir {folder}: cannot make the folder: No space left on device\n")


@pytest.mark.parametrize("kept", ["schema_version", "rft_solver_version"])
def test_json_read_back_with_one_of_the_versions_alone_is_taken(kept: str):
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    printed = answer.as_json()
    dropped = "rft_solver_version" if kept == "schema_version" else "schema_version"
    older = {key: value for key, value in printed.items() if key != dropped}
    assert Answer.model_validate(older).as_json() == printed


BEYOND_AND_WAYLESS = {"pools": [{"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}], "jobs": [
    {"name": "way", "model": "Qwen3-14B", "max_model_len": 262144, "rollout_gpus": 4},
    {"name": "huge", "model": "Qwen3-32B", "max_model_len": 2097152, "rollout_gpus": 4},
    {"name": "small", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4}]}
"""`way` has a way to run only on more nodes (with --token-budget auto), `huge` on none, `small` fits."""


def test_a_required_job_no_nodes_place_keeps_the_buy_note_s_required_list(cli, tmp_path: Path):
    # --required names huge, which no number of nodes places: --buy alone would buy for small too (16 GPUs, not 8),
    # so the note keeps --required, though the file marks no job required.
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(BEYOND_AND_WAYLESS), encoding="utf-8")
    status, _, err = cli("cluster", str(path), "--required", "huge", "--minimize", "nodes")
    assert status == 1 and err.splitlines()[1] == (
        "solve cluster: note: way: no way to run on the pools' nodes as they are, but more nodes may give it a way to "
        f"run (with --token-budget auto): solve cluster {path} --buy --required huge,way --token-budget auto names "
        "the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)")


SHORT = SINGLE_GPU_CAUTION_SHORT
EXACTLY_2 = ("no plan for exactly 2 trainer GPUs with Qwen3-8B on A100-80GB: 2 trainer + 7 rollout GPUs "
             "(--rollout-gpus) fit neither one node of 8, nor whole nodes with the trainer in one of them, nor with "
             "the trainer on whole nodes; fewer trainer GPUs train 8192 tokens")


@pytest.mark.parametrize(("flags", "fewer"), [
    ((), f": Env + Offload on 1 GPU (documented; {SHORT}), the other 1 free for rollout"),
    (("--no-offload",), (f" if you also drop --no-offload: Env + Offload on 1 GPU (documented; {SHORT}), the other 1 "
                         "free for rollout")),
], ids=["fewer", "nearest"])
def test_the_plan_on_fewer_gpus_beside_an_exact_count_carries_the_one_gpu_caution(cli, flags: tuple[str, ...],
                                                                                  fewer: str):
    # 2 trainer GPUs and 7 rollout GPUs have no layout on nodes of 8; 1 trainer GPU has.
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "8B", "--len", "8192", "--gpus", "2", "--exact",
                         "--rollout-gpus", "7", *flags, "--json")
    (answer,) = json.loads(out)
    assert (status, answer["reason"], answer["reason_caution_codes"]) == (
        1, EXACTLY_2 + fewer, ["single-gpu-advised-against"])


def test_a_map_on_a_stream_that_cannot_encode_the_one_gpu_mark_spells_it_in_ascii(
        ascii_cli: Callable[..., tuple[int, str, str]], monkeypatch: pytest.MonkeyPatch):  # noqa: F811
    monkeypatch.setenv("COLUMNS", "120")
    status, out, err = ascii_cli("map", "--gpu", "a100-80gb", "--model", "0.6B", "--by", "len", "--budgets", "1")
    assert (status, err) == (0, "")
    assert "E@1# " in out and out.endswith(f"\n# {SHORT}\n")


@pytest.mark.parametrize(("flags", "row"), [
    (("--model", "8B", "--len", "8192", "--gpus", "2"),
     ("for rollout    --total-gpus 2 --rollout-gpus 1 keeps 1 of the 2 for it: Env + Offload on 1 trainer GPU, 8192 "
      f"tokens, 2.00x the relative step time (documented; {SHORT})")),
    (("--model", "4B", "--len", "32768", "--minimize", "gpus"),
     ("fewer GPUs     --token-budget auto trains it on 1 GPU (1 fewer): Env + Offload with a lowered "
      f"max_token_len_per_gpu of 56320 (estimated; {SHORT})")),
], ids=["rollout-kept", "token-budget-auto"])
def test_a_summary_row_on_one_gpu_beside_the_plan_carries_the_caution_in_short(
        cli, monkeypatch: pytest.MonkeyPatch, flags: tuple[str, ...], row: str):
    monkeypatch.setenv("COLUMNS", "300")
    status, out, _ = cli("--gpu", "a100-80gb", *flags)
    # (the rollout-kept plan's host caution follows it: s89)
    assert status == 0 and any(line == row or line.startswith(f"{row}; caution: ") for line in out.splitlines())


def test_stdout_that_refuses_writes_for_another_reason_than_the_disk_stays_exit_2(solve_script: Path, tmp_path: Path):
    # A stdout opened for reading (`1< file`): each write fails with EBADF, the place's fault, not the disk's.
    (tmp_path / "read-only").write_text("", encoding="utf-8")
    with open(tmp_path / "read-only", "rb") as reading:
        result = subprocess.run([str(solve_script), "tables", "--json"], stdout=reading, stderr=subprocess.PIPE,
                                text=True, timeout=60, check=False)
    message = "solve tables: error: cannot write the output: Bad file descriptor\n"
    assert (result.returncode, result.stderr) == (2, message)


def test_write_on_a_flow_style_config_with_a_documented_plan_still_gives_the_check_command(cli, tmp_path: Path):
    # A documented plan within the validated length: the note would hold the command alone, which stderr says.
    config, out = tmp_path / "in.yaml", tmp_path / "out.yaml"
    config.write_text("{algorithm: {algorithm_type: grpo}, model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}, "
                      "cluster: {node_num: 1, gpu_per_node: 8}, explorer: {rollout_model: {engine_num: 4}}}\n",
                      encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "a100-80gb", "--write", str(out))
    assert (status, "#" in out.read_text(encoding="utf-8")) == (0, False)
    note = (f"solve: note: {out}: a config in flow style ({{...}}) holds no comment line, so --write set the plan's "
            "keys in it without the note a block config gets above model.max_model_len: check the file with: solve "
            f"--from-config {out} --check --gpu A100-80GB")
    assert [line for line in err.splitlines() if "flow style" in line] == [note]
