"""docs/memory.md's account of ``solve memory`` against the command: the options the planner command it ends with
carries over, and the keys of its ``--json`` (session 73: `--reference`/`--no-reference` and `--gpu-interconnect`
were carried but unnamed, `reference_model` given but unnamed)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

MEMORY_MD = (Path(__file__).resolve().parent.parent / "docs" / "memory.md").read_text(encoding="utf-8")
Cli = Callable[..., tuple[int, str, str]]


def _between(start: str, end: str) -> str:
    """The text of memory.md from `start` to `end`, its lines joined."""
    first = MEMORY_MD.index(start)
    return " ".join(MEMORY_MD[first:MEMORY_MD.index(end, first)].split())


def test_every_option_the_planner_command_carries_is_named(cli: Cli) -> None:
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "my-gpu", "--gpu-memory", "40", "--gpu-interconnect",
                         "pcie", "--gpus", "2", "--len", "64k", "--node-gpus", "4", "--host-ram", "64", "--margin",
                         "0.05", "--lora-rank", "16", "--no-reference", "--critic", "offloaded")
    command = out.splitlines()[-1]
    assert status == 1 and command.startswith("  solve --model 8B --gpu my-gpu --gpus 2 --len 65536 --gpu-memory 40 ")
    carried = set(re.findall(r"--[a-z-]+", command)) - {"--model", "--gpu", "--gpus", "--len"}
    assert carried == {"--gpu-memory", "--gpu-interconnect", "--node-gpus", "--host-ram", "--margin", "--lora-rank",
                       "--no-reference", "--critic"}  # --reference with --lora-rank is refused (session 74)
    named = _between("**Where the setting does not train**", "It exits 0")
    assert [option for option in sorted(carried) if f"`{option}`" not in named and f"`{option}/" not in named] == []
    assert "`--memory-model`" in named and "`--cells`" in named and "`--no-reference`" in named


def test_every_key_of_its_json_but_the_breakdowns_is_named(cli: Cli) -> None:
    status, out, _ = cli("memory", "--model", "8B", "--gpu", "a100", "--gpus", "4", "--len", "32k", "--sp", "4",
                         "--env", "--json")
    breakdown = {"terms", "total_gib", "usable_gib", "memory_gib", "tokens_per_gpu", "step_gib", "step_usable_gib",
                 "critic_gib", "schema_version", "rft_solver_version"}
    named = _between("`--json` prints what was asked", "Its JSON Schema is")
    assert status == 0 and [key for key in json.loads(out) if key not in breakdown and f"`{key}`" not in named] == []
