"""dpo-mini-batch-split names only the releases whose actor's update runs with dynamic batch sizes off (session 83,
fixmerge2). Without ``--trinity-version``, a DPO config whose actor sets its own ``use_dynamic_bsz: false`` under a
trainer's ``use_dynamic_bsz: true`` runs so on Trinity 0.5 (which reads the actor's own key) but not on 0.6 (which
gives the actor the trainer's), so the line says Trinity 0.5 asserts, not "0.5, and 0.6 on verl before 0.8"."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from test_dpowrite_s83 import PLAN
from test_fragcheck7_s83 import WORDS, _config
from test_tokbudget_s72 import Cli


def _mini_batch_lines(tmp_path: Path, cli: Cli, actor_dynamic: bool | None, trainer_dynamic: bool) -> list[str]:
    """``--check --json``'s ``dpo-mini-batch-split`` lines (code: words) for `_config(1, 40)` (5 per GPU, the
    actor's 1 doubled to 2) with the actor's own ``use_dynamic_bsz`` `actor_dynamic` (None: unset) and the
    trainer's `trainer_dynamic`, without ``--trinity-version``."""
    config = _config(1, 40)
    config["trainer"]["use_dynamic_bsz"] = trainer_dynamic
    if actor_dynamic is not None:
        config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = actor_dynamic
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), *PLAN, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert status == 0 and current["refused"] is False, err
    return [f"{code}: {words}" for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                      strict=True) if code.startswith("dpo-mini-batch-split")]


def test_only_trinity_05_is_named_where_06_runs_the_actor_with_dynamic_batch_sizes(tmp_path: Path, cli: Cli):
    assert _mini_batch_lines(tmp_path, cli, False, True) == ["dpo-mini-batch-split: " + WORDS.format(
        where="Trinity 0.5 asserts", micro=2, written=1, multiple=16,
        nearest="32 or 48")]


def test_both_releases_are_named_where_both_run_it_so(tmp_path: Path, cli: Cli):
    assert _mini_batch_lines(tmp_path, cli, None, False) == ["dpo-mini-batch-split: " + WORDS.format(
        where="Trinity 0.5, and 0.6 on verl before 0.8, assert", micro=2, written=1, multiple=16,
        nearest="32 or 48")]


def test_nothing_where_neither_release_runs_it_so(tmp_path: Path, cli: Cli):
    assert _mini_batch_lines(tmp_path, cli, True, True) == []
