"""Persona12 (s65): what three users' first hour with the docs found (tests that failed before each fix)."""
from pathlib import Path

import pytest
import yaml

from solver.cli import _COMMANDS, main

A100_NODE = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}


def test_the_buy_note_beside_placed_jobs_not_required_names_them_too(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]):
    # r (required) and p are placed, c is left out (5 GPUs at the fewest each, 8 on the node). Naming c alone with
    # --required made --buy place r and c on the node as it is and leave p out: "nothing to buy", c still not beside p.
    jobs = [{"name": "r", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4, "required": True},
            {"name": "p", "model": "Qwen3-0.6B", "max_model_len": 4096, "rollout_gpus": 1, "priority": 3},
            {"name": "c", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 4}]
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [A100_NODE], "jobs": jobs}), encoding="utf-8")
    assert main(["cluster", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required p,c names the "
        "fewest nodes to add to the pools (and the jobs no number of nodes runs)\n")
    assert main(["cluster", str(path), "--buy", "--required", "p,c"]) == 0
    assert capsys.readouterr().out.startswith("status: optimal; to place every job, buy 8 GPUs (1 node), proven the "
                                              "fewest\n")


def test_json_md_names_every_command_that_prints_json():
    # docs/json.md, "for programs", named five commands' --json; solve tables --json was left out.
    intro = (Path(__file__).parent.parent / "docs" / "json.md").read_text(encoding="utf-8").split("\n## ")[0]
    with_json = [name for name, (build, _) in _COMMANDS.items()
                 if any("--json" in action.option_strings for action in build()._actions)]
    assert with_json == ["tables", "cluster", "calibrate", "memory", "map"]
    assert [name for name in with_json if f"`solve {name} --json`" not in intro] == []
    assert "`solve --json`" in intro
