"""Coverage of session 82's changed lines (coverage22): the lines and branches of `git diff` since the session's start
in solver/ that the session's tests and those of the changed functions left unrun. `config_key_changes` where
``--write`` refuses the plan (its cluster is another's): the plan's own keys alone, no alias's path, none removed;
Ctrl-C while a placement with ``--current`` is decoded: its running jobs marked all the same (Ctrl-C held), and the
placed jobs' solve_best questions left unasked, counted."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_aliaskeys_s82 import ACTOR, FSDP
from test_solvebest_s82 import FLEET

import solver
import solver.cluster.search
from solver.query import QueryError
from solver.trinity import config_key_changes, patched_trinity_config

Cli = Callable[..., tuple[int, str, str]]


def test_the_keys_changed_where_write_refuses_the_plan_are_its_own_keys_alone() -> None:
    # FSDP's cluster gives the trainer 4 GPUs (8 less 4 rollout engines): --write refuses a plan on 8, so the list is
    # the plan's own keys it would set (the actor's offload flags off), not the difference of a copy: the ref's
    # fsdp_config, the actor's by an alias, is not named, and nothing is removed
    catalog = solver.load_catalog()
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, exact=True, max_model_len=16384)
    assert answer.best is not None and (answer.best.setting.label, answer.best.gpus) == ("Env", 8)
    model = catalog.model("Qwen3-8B")
    refusal = (r"^c: the plan is for 8 trainer GPUs, but the config's cluster gives the trainer 4 "
               r"\(cluster\.node_num x cluster\.gpu_per_node, less 4 rollout GPUs\)")
    with pytest.raises(QueryError, match=refusal):
        patched_trinity_config(FSDP, answer.best, model, name="c", environ={})
    changes = config_key_changes(FSDP, answer.best, model, name="c", environ={})
    assert [change.model_dump(mode="json") for change in changes] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 1},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 32768},
        {"key": f"{ACTOR}.param_offload", "config_value": True, "plan_value": False},
        {"key": f"{ACTOR}.optimizer_offload", "config_value": True, "plan_value": False}]


def test_ctrl_c_while_a_placement_with_current_is_decoded_still_marks_its_running_jobs(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ctrl-C while the placement is decoded (widening, the hints): it is decoded again without them, then its running
    # jobs are marked with Ctrl-C held (the placement is interrupted before they are), and solve_best, asked last,
    # asks nothing more: the four jobs on the tables' plans are counted unasked
    fleet, running = tmp_path / "fleet.yaml", tmp_path / "running.json"
    fleet.write_text(FLEET, encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 0
    running.write_text(out, encoding="utf-8")
    decode, widen_by = solver.cluster.search._decode, []

    def interrupted(*args: Any, **kwargs: Any) -> Any:
        widen_by.append(args[5])
        if len(widen_by) == 1:
            raise KeyboardInterrupt
        return decode(*args, **kwargs)

    monkeypatch.setattr(solver.cluster.search, "_decode", interrupted)
    status, out, err = cli("cluster", str(fleet), "--current", str(running), "--json")
    answer = json.loads(out)
    assert (status, err) == (130, "solve cluster: interrupted: the best placement found so far is above\n")
    assert widen_by[0] is not None and widen_by[1:] == [None]  # decoded again, not widened
    assert [(placed["job"], placed["current"], "solve_best" in placed) for placed in answer["placements"]] == [
        ("lora-a", "stays", False), ("lora-b", "stays", False), ("lora-c", "stays", False), ("full-8b", "stays", False)]
    assert (answer["interrupted"], answer["solve_best_unasked"], answer["wall_clock_stopped"]) == (True, 4, [])
