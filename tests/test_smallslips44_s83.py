"""Small slips (s83, smallslips44): Ctrl-C while solve's best is asked, once the placement (purchase) is worked out,
leaves it whole, --emit-dir's configs written, and exits with 130 saying what was skipped; ..."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.cluster.options import Planner

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent

FLEET = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 4, gpus_per_node: 4, host_ram_gb: 1024}
jobs:
  - {name: lora-a, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 64}
  - {name: lora-b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 64}
  - {name: lora-c, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 16}
  - {name: full-8b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 0}
"""
"""test_solvebest_s82's: three LoRA jobs on the tables' plans whose solve's best is asked, and a job on solve's pick."""


def _ctrl_c_at_third_solve_best(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Ctrl-C as solve's best is asked the third time (lora-c's question); the jobs asked, in order."""
    solve_best, calls = Planner.solve_best, []

    def interrupted(planner: Planner, *args: Any) -> Any:
        calls.append(args[1].name)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return solve_best(planner, *args)

    monkeypatch.setattr(Planner, "solve_best", interrupted)
    return calls


def test_ctrl_c_while_solve_best_is_asked_writes_the_configs_and_exits_130(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    whole = json.loads(out)  # without Ctrl-C: every question asked
    calls = _ctrl_c_at_third_solve_best(monkeypatch)
    status, out, err = cli("cluster", str(fleet), "--json", "--emit-dir", str(tmp_path / "configs"))
    answer = json.loads(out)
    assert status == 130 and calls == ["lora-a", "lora-b", "lora-c"]
    assert sorted(path.name for path in (tmp_path / "configs").iterdir()) == [
        "full-8b.yaml", "lora-a.yaml", "lora-b.yaml", "lora-c.yaml"]
    assert [placed["config_file"] for placed in answer["placements"]] == [
        str(tmp_path / "configs" / f"{placed['job']}.yaml") for placed in answer["placements"]]
    assert (answer["interrupted"], answer["solve_best_unasked"], answer["status"]) == (False, 2, "optimal")
    assert [{key: value for key, value in placed.items() if key not in ("solve_best", "config_file")}
            for placed in answer["placements"]] == [
        {key: value for key, value in placed.items() if key not in ("solve_best", "config_file")}
        for placed in whole["placements"]]
    assert err.splitlines()[-1] == (
        "solve cluster: interrupted once the placement was worked out: the placement above is whole (its configs too); "
        "solve's best was not asked for 2 jobs placed on the tables' plans")
    assert "no configs written" not in err and "may not be the best" not in err


def test_ctrl_c_while_solve_best_is_asked_after_a_purchase_exits_130_with_it_whole(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(FLEET, encoding="utf-8")
    calls = _ctrl_c_at_third_solve_best(monkeypatch)
    status, out, err = cli("cluster", str(fleet), "--buy", "--json")
    answer = json.loads(out)
    assert status == 130 and len(calls) == 3
    assert (answer["interrupted"], answer["solve_best_unasked"], answer["status"]) == (False, 2, "optimal")
    assert err.splitlines()[-1] == (
        "solve cluster: interrupted once the purchase was worked out: the purchase above is whole; solve's best was "
        "not asked for 2 jobs placed on the tables' plans")


def _statuses_cli_md_gives_every_command() -> list[int]:
    """The exit statuses docs/cli.md's words give every command: 130, 143 and 141, then 70 for a defect."""
    text = " ".join((ROOT / "docs/cli.md").read_text(encoding="utf-8").split())
    sentence = "exits with " + text.split("Every command exits with ", 1)[1].split(" a script does not take", 1)[0]
    return [int(number) for number in re.findall(r"(?:exits with|\),|and) (\d+)(?: when|,)", sentence)]


@pytest.mark.parametrize("command", [[], ["tables"], ["map"], ["cluster"], ["memory"], ["calibrate"], ["examples"]])
def test_every_commands_help_lists_the_statuses_cli_md_gives(cli: Cli, command: list[str]):
    assert _statuses_cli_md_gives_every_command() == [130, 143, 141, 70]
    status, out, _ = cli(*command, "--help")
    statuses = " ".join(out.split()).rsplit("Exit status: ", 1)[1]
    assert status == 0 and ", 2 bad input" in statuses and statuses.endswith(
        ", 74 a full disk, 130 Ctrl-C, 143 a request to end (SIGTERM), 141 a reader gone (| head), 70 an internal "
        "error.")
