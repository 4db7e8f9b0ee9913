"""Session 79, smallslips32: DPO and LoRA slips. A cluster job's ``dpo: true`` is said where its training is
(``solve cluster``'s training column and note, a plan's and an unplaced job's ``dpo`` in ``--json``); ``--current``
moves a running job whose ``dpo`` the fleet file now asks otherwise (``training-changed``), as for its LoRA rank or
critic; a plan keeps its run's DPO and its config's mode train (`Plan.dpo`, `Plan.mode_train`), so an answer read
back from JSON writes the DPO mode note as before; and ``solve --from-config C --emit trinity``'s check command gives
no ``--lora-rank`` where the config counts the plan's rank itself, as ``--write``'s does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_dpoleft_s78 import DPO_CONFIG, MODE_NOTE, PADDED
from test_fragcheck3_s79 import LORA_CONFIG
from test_padbound_s71 import INTERNLM2, Cli

import solver
from solver.api import answer_query, config_query
from solver.trinity import read_trinity_config

FLEET = """pools:
  - name: h100
    gpu: H100-80GB
    nodes: 1
    gpus_per_node: 8
jobs:
  - name: pairs
    model: Qwen2.5-7B
    max_model_len: 8192
    dpo: {dpo}
  - name: plain
    model: Qwen2.5-7B
    max_model_len: 8192
"""
LEFT_OUT = """pools:
  - name: small
    gpu: H100-80GB
    nodes: 1
    gpus_per_node: 1
    host_ram_gb: 64
jobs:
  - name: pairs
    model: Llama-3.1-70B
    max_model_len: 8192
    lora_rank: 16
    dpo: true
"""
DPO_NOTE = ("DPO: it trains DPO (the job's dpo), a chosen and a rejected sequence per micro-batch where its model is "
            "trained one padded sequence per micro-batch")


def _fleet(tmp_path: Path, text: str, name: str = "fleet.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _rows(out: str) -> list[str]:
    return [" ".join(line.split()) for line in out.splitlines() if line.startswith("│")]


# (1) Before, a DPO job's row said "full, ref" (or no training column at all), and its plan had no dpo.

def test_a_dpo_job_is_said_in_the_training_column_and_the_json(tmp_path: Path, cli: Cli) -> None:
    fleet = _fleet(tmp_path, FLEET.format(dpo="true"))
    status, out, err = cli("cluster", str(fleet))
    assert (status, err) == (0, "")
    assert _rows(out) == [
        "│ 0 │ 0-3 │ pairs │ 4 │ 0 │ Env │ full, ref, DPO │ 8192 │ 0.2525 │ estimated │",
        "│ 0 │ 4-7 │ plain │ 4 │ 0 │ Env │ full, ref │ 8192 │ 0.2525 │ estimated │"]
    assert DPO_NOTE in " ".join(out.split())
    status, out, _ = cli("cluster", str(fleet), "--json")
    plans = {placed["job"]: placed["plan"] for placed in json.loads(out)["placements"]}
    assert (status, plans["pairs"]["dpo"], plans["plain"]["dpo"]) == (0, True, False)
    assert plans["pairs"]["mode_train"] is False  # a cluster job reads no config


def test_a_plain_fleet_shows_no_dpo_and_no_training_column(tmp_path: Path, cli: Cli) -> None:
    status, out, _ = cli("cluster", str(_fleet(tmp_path, FLEET.format(dpo="false"))))
    assert status == 0 and "training" not in out and "DPO" not in out


def test_an_unplaced_dpo_job_says_it_trains_dpo(tmp_path: Path, cli: Cli) -> None:
    fleet = _fleet(tmp_path, LEFT_OUT)
    status, out, _ = cli("cluster", str(fleet))  # a job left out: exit status 1 (NO_PLAN)
    row = "│ pairs │ LoRA 16, no ref, DPO │ small: nothing in the tables"
    assert status == 1 and _rows(out)[0].startswith(row)
    assert DPO_NOTE in " ".join(out.split())
    (unplaced,) = json.loads(cli("cluster", str(fleet), "--json")[1])["unplaced"]
    assert (unplaced["lora_rank"], unplaced["reference_model"], unplaced["dpo"]) == (16, False, True)
    without = json.loads(cli("cluster", str(_fleet(tmp_path, LEFT_OUT.replace("    dpo: true\n", ""), "no.yaml")),
                             "--json")[1])["unplaced"][0]
    assert "dpo" not in without and without["lora_rank"] == 16  # left out where the job trains no DPO


# (2) Before, --current kept a running DPO job as it ran though the file no longer asks DPO (and the other way).

@pytest.mark.parametrize(("ran", "asked"), [("true", "false"), ("false", "true")])
def test_current_moves_a_job_whose_dpo_changed(tmp_path: Path, cli: Cli, ran: str, asked: str) -> None:
    running = tmp_path / "now.json"
    status, out, _ = cli("cluster", str(_fleet(tmp_path, FLEET.format(dpo=ran), "ran.yaml")), "--json")
    running.write_text(out)
    fleet = _fleet(tmp_path, FLEET.format(dpo=asked))
    status, out, _ = cli("cluster", str(fleet), "--current", str(running), "--json")
    placed = {one["job"]: one for one in json.loads(out)["placements"]}
    assert (status, placed["plain"]["current"], placed["pairs"]["current"]) == (0, "stays", "moves")
    assert (placed["pairs"]["move_reason_code"], placed["pairs"]["move_reason"]) == (
        "training-changed", f"the file asks dpo {asked} now; it runs with dpo {ran}")
    status, out, _ = cli("cluster", str(fleet), "--current", str(running))
    assert status == 0 and "running now: 1 stays, 1 moves, 0 stop; 0 start" in out


def test_current_keeps_a_dpo_job_the_file_asks_the_same(tmp_path: Path, cli: Cli) -> None:
    fleet = _fleet(tmp_path, FLEET.format(dpo="true"))
    running = tmp_path / "now.json"
    running.write_text(cli("cluster", str(fleet), "--json")[1])
    placed = json.loads(cli("cluster", str(fleet), "--current", str(running), "--json")[1])["placements"]
    assert [one["current"] for one in placed] == ["stays", "stays"]


# (3) Before, an answer read back from JSON had no query, so its fragment lost the DPO mode note.

@pytest.mark.parametrize(("mode", "node", "said"), [("train", 8, False), ("both", 9, True)])
def test_a_dpo_answer_read_back_keeps_its_mode_note(mode: str, node: int, said: bool) -> None:
    config = read_trinity_config(DPO_CONFIG.format(mode=mode, node=node), "dpo.yaml", {})
    (answer,) = answer_query(config_query(PADDED, config, gpu="h100"), PADDED)
    plan = answer.as_json()["plans"][0]
    assert (plan["dpo"], plan["mode_train"]) == (True, mode == "train")
    back = solver.Answer.model_validate_json(json.dumps(answer.as_json()))
    assert back.query is None and back.best is not None and back.best.dpo_mode_unset is said
    fragment = solver.trinity_config(back, PADDED)
    assert (MODE_NOTE in fragment) is said
    assert fragment == solver.trinity_config(answer, PADDED)


def test_a_dpo_answer_of_no_config_read_back_says_the_mode() -> None:
    (answer,) = solver.plan("internlm2-7b", gpu="h100", max_model_len=8192, budget_gpus=8, dpo=True, catalog=PADDED)
    back = solver.Answer.model_validate_json(json.dumps(answer.as_json()))
    assert MODE_NOTE in solver.trinity_config(back, PADDED) and MODE_NOTE in solver.trinity_config(answer, PADDED)
    assert MODE_NOTE not in solver.trinity_config(solver.Answer.model_validate_json(json.dumps(
        solver.plan("internlm2-7b", gpu="h100", max_model_len=8192, budget_gpus=8, catalog=PADDED)[0].as_json())),
        PADDED)


# (4) Before, --emit trinity's check command gave --lora-rank 64, the config's own rank.

def test_emit_trinitys_check_command_leaves_the_configs_own_rank(tmp_path: Path, cli: Cli) -> None:
    config = tmp_path / "lora.yaml"
    config.write_text(LORA_CONFIG)
    commands = []
    for extra in ((), ("--lora-rank", "128")):  # not 32: under the config's 64 on its targets (adapterkeep_s80)
        status, out, err = cli("--from-config", str(config), "--gpu", "h100", *extra, "--emit", "trinity")
        assert status == 0, err
        (command,) = [line for line in out.splitlines() if "solve --from-config CONFIG --check" in line]
        commands.append(command)
    assert commands == [
        "#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu H100-80GB",
        ("#   PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True solve --from-config CONFIG --check --gpu H100-80GB "
         "--lora-rank 128")]  # a rank other than the config's is given still


def test_solve_json_says_a_dpo_configs_plan_trains_dpo_in_mode_train(tmp_path: Path, cli: Cli) -> None:
    given = tmp_path / "dpo.yaml"
    given.write_text(DPO_CONFIG.format(mode="train", node=8))
    status, out, _ = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["plans"][0]["dpo"], answer["plans"][0]["mode_train"]) == (0, True, True)
