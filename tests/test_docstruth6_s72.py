"""What the docs say, held to the code: a running job whose own ways a solve that ran out of time may lack moves with
`move-unproven` before any check of its ways (docs/json.md's Move codes, docs/cluster.md), without naming the jobs on
its GPUs; the guide's `--gpu-memory` bullet names the metavar `solve --help` gives; planner.md's name limit is the
one the command refuses past."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from test_clusterkeep2_s71 import _fleet, _running_now
from test_clusterwhy_s73 import undecided_for

from solver.tables.bounds import MAX_NAME_CHARACTERS

Cli = Callable[..., tuple[int, str, str]]
DOCS = Path(__file__).parent.parent / "docs"


def test_a_move_whose_ways_a_solve_left_undecided_is_unproven(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # duo started by hand on 2 GPUs, where no plan trains it (no-way-at-count when the ways are decided): with a solve
    # behind its ways out of time, its missing way may be one the time cut, so only the placement's proof is said.
    undecided_for(monkeypatch, "Qwen3-4B")
    now = _running_now(cli, tmp_path, (1, {"trainer_gpus": 2, "gpu_indexes": [0, 1]}))
    status, out, _ = cli("cluster", str(_fleet(tmp_path)), "--current", str(now), "--json")
    duo = json.loads(out)["placements"][1]
    assert status == 0 and (duo["job"], duo["current"], duo["move_reason_code"], duo["move_reason"]) == (
        "duo", "moves", "move-unproven", "the placement is not proven best (raise --time-limit)")
    assert ("the checks of its ways give `move-unproven` instead; another job's undecided solve leaves them as they "
            "are") in " ".join((DOCS / "json.md").read_text(encoding="utf-8").split())


def test_the_guides_gpu_memory_bullet_names_the_helps_metavar(cli: Cli):
    status, out, _ = cli("--help")
    metavar = re.search(r"--gpu-memory (\w+)", out)
    assert status == 0 and metavar is not None and metavar.group(1) == "SIZE"
    guide = (DOCS / "guide.md").read_text(encoding="utf-8")
    assert f"- `{metavar.group(1)}` is best nvidia-smi's total" in guide and "- `M` is best" not in guide


@pytest.mark.parametrize(("flag", "kind"), [("--gpu", "GPU"), ("--model", "model")])
def test_planner_mds_name_limit_is_the_one_refused_past(cli: Cli, flag: str, kind: str):
    others = {"--gpu": ("--model", "8B"), "--model": ("--gpu", "a100")}[flag]
    assert cli(flag, "x" * MAX_NAME_CHARACTERS, *others)[2].count("characters long") == 0
    status, _, err = cli(flag, "x" * (MAX_NAME_CHARACTERS + 1), *others)
    assert status == 2 and err.endswith(f"is {MAX_NAME_CHARACTERS + 1} characters long; a {kind} name is at most "
                                        f"{MAX_NAME_CHARACTERS}\n")
    assert f"name longer than {MAX_NAME_CHARACTERS} characters is refused by its" in " ".join(
        (DOCS / "planner.md").read_text(encoding="utf-8").split())
