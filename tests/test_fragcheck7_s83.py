"""DPO's doubled micro-batch against each GPU's mini-batch (session 83, fragcheck7). Trinity before verl 0.8 doubles
the actor's micro-batch size per GPU for DPO (0.6.0 ``trainer/verl_legacy/verl_config.py:685-688``), and its actor
worker asserts, as the trainer starts, that the doubled size divides the train batch over the data-parallel ranks
(0.6.0 ``verl_legacy/fsdp_workers.py:238-270``, 0.5.1 ``trainer/verl/fsdp_workers.py:216-245``). Loading
``--write``'s copies with Trinity's own config code found train_batch_size 40 on 8 GPUs at SP 1 (5 per GPU) taken by
every loader and said by nothing, though the written size (1 for 0.5, doubled to 2; 2 for 0.6, doubled to 4 before
verl 0.8) fails there: now ``dpo-mini-batch-split-refused`` (0.5) or ``dpo-mini-batch-split``, in ``--check`` and in
``--write``'s warnings on its copy. Merged with smallslips44's check of the same rule (fixmerge2): its words, and
its tests of each release's line and code (tests/test_smallslips44_s83.py), which this file no longer repeats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_dpowrite_s83 import ACTOR_SIZE, PLAN, _dpo
from test_tokbudget_s72 import Cli

# the merged line (smallslips44's words, tests/test_smallslips44_s83.py's MINI_SPLIT) for 8 ranks, 5 per GPU
WORDS = ("DPO with dynamic batch sizes off in the actor's update: {where} as the trainer starts that its micro-batch "
         f"per GPU, {{micro}} sequences ({ACTOR_SIZE} {{written}} doubled for DPO), divides its mini-batch per GPU, "
         "buffer.train_batch_size 40 over the 8 data-parallel ranks (trainer GPUs 8 / SP 1) = 5, which it does not: "
         "the trainer fails there; make buffer.train_batch_size a multiple of {multiple} (8 ranks x {micro}; the nearest "
         "to 40: {nearest})")

def _config(size: int | None, batch: int) -> dict[str, Any]:
    """`_dpo`'s DPO config (Qwen3-8B at 8192 tokens on 8 trainer GPUs, dynamic batch sizes off) with the actor's
    micro-batch size per GPU `size` and a train batch of `batch`."""
    config = _dpo(size)
    config["buffer"]["train_batch_size"] = batch
    return config


def _current(tmp_path: Path, cli: Cli, config: dict[str, Any], *options: str) -> dict[str, Any]:
    """``--check --json``'s ``current`` for `config` on 8 H100s with `options`; the exit status is 1 where the config
    is refused or its settings are not vouched for (s87: a size doubled past the verdict's budget), else 0."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    status, out, err = cli("--from-config", str(path), *PLAN, "--check", "--json", *options)
    current = dict(json.loads(out)[0]["current"])
    assert status == (1 if current["refused"] or not current["trains"] else 0), err
    return current


def _said(current: dict[str, Any]) -> list[tuple[str, str]]:
    """(code, words) of each ``dpo-mini-batch-split`` line of `current`."""
    return [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                 strict=True) if code.startswith("dpo-mini-batch-split")]


@pytest.mark.parametrize(("size", "batch", "said"), [(1, 64, False), (2, 64, False), (1, 48, False), (None, 16, False),
                                                     (2, 48, True)])
def test_nothing_is_said_where_the_doubled_size_divides_the_mini_batch(tmp_path: Path, cli: Cli, size: int | None,
                                                                       batch: int, said: bool):
    # per GPU 64 / 8 = 8, 48 / 8 = 6, 16 / 8 = 2: 2 x 1 divides each, 2 x 2 = 4 divides 8 but not 6
    for options in ((), ("--trinity-version", "0.5")):
        assert bool(_said(_current(tmp_path, cli, _config(size, batch), *options))) is said


def test_not_doubled_for_another_algorithm_nor_with_dynamic_batch_sizes_on(tmp_path: Path, cli: Cli):
    grpo = _config(1, 40)
    grpo["algorithm"]["algorithm_type"] = "grpo"
    dynamic = _config(1, 40)
    dynamic["trainer"]["use_dynamic_bsz"] = True
    assert _said(_current(tmp_path, cli, grpo, "--trinity-version", "0.5")) == []
    # the verdict judges the config's own micro-batches (Query.own_batch_sizes), not the plans' pairs (40 on 8 ranks
    # at SP 1 is no multiple of 16): its settings train (mutants56)
    current = _current(tmp_path, cli, dynamic, "--trinity-version", "0.5")
    assert _said(current) == [] and current["trains"]


def test_write_says_what_to_write_before_verl_0_8_and_warns_not_of_the_size_it_rules_out(tmp_path: Path, cli: Cli):
    """The plan keeps a DPO batch to twice the ranks (dpobatch92: 40 on 8 GPUs moves to SP 2, 10 per GPU), which the
    written 2, one pair on verl 0.8 or later, keeps there; before verl 0.8 Trinity doubles it to 4, which 10 breaks,
    so the note says to write 1 there, one pair once doubled, which 10 keeps. --write warned of the 4 too ("make
    buffer.train_batch_size a multiple of 16"), against its note and the plan's rule (smalls92b): no longer."""
    path, out_path = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(_config(3, 40)), encoding="utf-8")
    status, _, err = cli("--from-config", str(path), *PLAN, "--trinity-version", "0.6", "--write", str(out_path))
    assert status == 0
    copy = yaml.safe_load(out_path.read_text(encoding="utf-8"))
    assert copy["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["ppo_micro_batch_size_per_gpu"] == 2
    assert copy["trainer"]["ulysses_sequence_parallel_size"] == 2
    assert ("before verl 0.8 (Trinity 0.6 on verl 0.7) Trinity doubles it to 4 sequences, two pairs, so there write 1"
            in err and "warning" not in err)


def test_write_keeps_a_dpo_batch_to_twice_the_ranks_under_0_5(tmp_path: Path, cli: Cli):
    """40 on 8 GPUs at SP 1 (5 per GPU) splits 0.5's doubled pair, which its actor asserts as it starts: the plan
    moves to SP 2 (4 ranks, 10 per GPU), and the copy breaks nothing (before dpobatch92 it kept SP 1 and warned)."""
    path, out_path = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(_config(3, 40)), encoding="utf-8")
    status, _, err = cli("--from-config", str(path), *PLAN, "--trinity-version", "0.5", "--write", str(out_path))
    assert status == 0 and "warning" not in err
    copy = yaml.safe_load(out_path.read_text(encoding="utf-8"))
    assert copy["trainer"]["ulysses_sequence_parallel_size"] == 2
    assert copy["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["ppo_micro_batch_size_per_gpu"] == 1
    current = _current(tmp_path, cli, copy, "--trinity-version", "0.5")
    assert _said(current) == [] and not current["refused"]


def test_write_says_nothing_of_it_where_the_copy_keeps_the_rule(tmp_path: Path, cli: Cli):
    # 64 / 8 = 8: the config's 3 (doubled 6) breaks it, the written 1 (doubled 2) keeps it
    path, out_path = tmp_path / "c.yaml", tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump(_config(3, 64)), encoding="utf-8")
    status, _, err = cli("--from-config", str(path), *PLAN, "--trinity-version", "0.5", "--write", str(out_path))
    assert status == 0 and "mini-batch of" not in err
    assert [code for code, _ in _said(_current(tmp_path, cli, _config(3, 64), "--trinity-version", "0.5"))] == [
        "dpo-mini-batch-split-refused"]
