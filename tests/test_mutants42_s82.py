"""Tests that kill the mutants of session 82's merges that the merges' own tests left alive (session 82, mutants42):
aliaskeys' self-holding alias refusal and ``config_keys_changed`` order and cost, criticbudget's critic forward
budget, release-less reference algorithms and a quoted budget kept, ..."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_aliaskeys_s82 import HEAD, MODEL, ROLLOUT
from test_criticbudget_s82 import BASE, FORWARD, KEPT, NO_REF, RAISED
from test_solvebest_s82 import FLEET

import solver
import solver.cluster.search
import solver.trinity.patch
from solver.cluster.options import Planner
from solver.trinity import config_key_changes, load_config_mapping
from solver.trinity.keys import (
    CRITIC_TOKEN_BUDGET,
    critic_budget_counted_words,
    critic_budget_note,
    ref_forward_runs,
)

Cli = Callable[..., tuple[int, str, str]]
ENV = "expandable_segments:True"
TRAINING = ".".join(CRITIC_TOKEN_BUDGET)


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", ENV)


def _best(text: str, gpu: str = "h100", **asked: Any) -> solver.Plan:
    """The best plan of the config `text` on `gpu` (`asked`: more of ``config_query``'s arguments)."""
    catalog = solver.load_catalog()
    query = solver.api.config_query(catalog, solver.trinity.read_trinity_config(text, "c", {}), gpu=gpu, **asked)
    (answer,) = solver.api.answer_query(query, catalog)
    assert answer.best is not None
    return answer.best


def _write(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[str, str]:
    """``--write``'s copy of `text` planned on H20s with `options`, and its notes (each ``NOTE`` and its words after
    the copy's name), less the Env note; it must succeed."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text, encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", *options, "--write", str(written))
    assert status == 0, err
    notes = [line.replace(f"solve: note: {written}: ", "NOTE ") for line in err.splitlines()
             if line.startswith("solve: note:") and "needs Env" not in line]
    return written.read_text(encoding="utf-8"), "".join(f"{line}\n" for line in notes)


# aliaskeys: solver/trinity/reader.py's `_held_by_itself`, solver/trinity/patch.py's `config_key_changes`


def test_of_two_values_that_hold_themselves_the_first_in_the_file_is_named() -> None:
    # the walk takes the keys in the file's order (a stack of them reversed): a.b, not c.d
    with pytest.raises(solver.trinity.ConfigError, match=r"^c: a\.b repeats a, the mapping that holds it "):
        load_config_mapping(HEAD + "a: &x {b: *x}\nc: &y {d: *y}\n", "c")


def test_a_key_set_through_an_alias_comes_before_its_anchors_own_path() -> None:
    # trainer is an alias of base (&t): the plan sets trainer's keys, written at base's; each plan key's own path
    # first, in the order --write sets them, then the anchor's path it is written at (later in the order, earlier
    # in the file)
    text = HEAD + MODEL + ROLLOUT + "base: &t {ulysses_sequence_parallel_size: 1}\ntrainer: *t\n"
    best = _best(text)
    assert (best.sp, best.max_token_len_per_gpu) == (2, 16384)
    changes = config_key_changes(text, best, solver.load_catalog().model("Qwen3-8B"), environ={})
    assert [change.model_dump(mode="json") for change in changes] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2,
         "written_at": "base.ulysses_sequence_parallel_size"},
        {"key": "base.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384,
         "written_at": "base.max_token_len_per_gpu"},
        {"key": "base.max_token_len_per_gpu", "config_value": None, "plan_value": 16384}]


def test_mappings_aliases_repeat_are_compared_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2**12 paths to l0's seed, which the patch leaves: the pair (l0, its copy) is compared once, so its seed is
    # compared once, not once a path
    text = HEAD + MODEL + ROLLOUT + "l0: &l0 {seed: 0}\n" + "".join(
        f"l{i}: &l{i} {{a: *l{i - 1}, b: *l{i - 1}}}\n" for i in range(1, 13))
    best = _best(text)
    compared: list[Any] = []
    same_data = solver.trinity.patch._same_data

    def counted(old: Any, new: Any, seen: Any) -> bool:
        compared.append(old)
        return same_data(old, new, seen)

    monkeypatch.setattr(solver.trinity.patch, "_same_data", counted)
    assert [change.key for change in config_key_changes(text, best, solver.load_catalog().model("Qwen3-8B"),
                                                        environ={})] == [
        "trainer.ulysses_sequence_parallel_size", "trainer.max_token_len_per_gpu"]
    assert compared.count(0) == 1


def test_a_key_a_merge_of_a_merge_brings_in_is_written_at_the_first_mapping_that_holds_it() -> None:
    # explorer.dummy merges mid, which merges trainer: each key set on trainer is named at each path, written at
    # trainer's (not mid's, which merges it too)
    text = (HEAD + MODEL + "trainer: &t\n  ulysses_sequence_parallel_size: 1\nmid: &m\n  <<: *t\n  x: 1\nexplorer:\n"
            "  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n  dummy:\n    <<: *m\n    own: 1\n")
    changes = config_key_changes(text, _best(text), solver.load_catalog().model("Qwen3-8B"), environ={})
    assert [(change.key, change.plan_value, change.written_at) for change in changes] == [
        (f"{path}.{key}", value, None if path == "trainer" else f"trainer.{key}")
        for key, value in (("ulysses_sequence_parallel_size", 2), ("max_token_len_per_gpu", 16384))
        for path in ("trainer", "mid", "explorer.dummy")]

# criticbudget: solver/trinity/plan_keys.py's `_own_budget_written`, `_own_budget_keys`; keys.py's `ref_forward_runs`


def test_the_critics_own_lower_forward_budget_is_kept_under_an_asked_budget_that_raises_the_roles(
        cli: Cli, tmp_path: Path) -> None:
    # as the critic's training budget (test_criticbudget_s82): its value forward's 20000 caps no plan either, kept
    # though the actor's 16384 is raised to the asked 32768
    text = (BASE + "    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: 16384}\n"
            "      ref: {log_prob_max_token_len_per_gpu: 16384}\n"
            "    critic:\n      forward_max_token_len_per_gpu: 20000\n")
    written, notes = _write(cli, tmp_path, text, "--token-budget", "default")
    assert yaml.safe_load(written)["trainer"]["trainer_config"]["critic"]["forward_max_token_len_per_gpu"] == 20000
    assert f"NOTE {FORWARD} 20000 {KEPT}\n" in notes


def test_without_a_release_dapo_runs_no_ref_forward_as_on_trinity_06(cli: Cli, tmp_path: Path) -> None:
    # no --trinity-version: 0.6's algorithms (dapo's use_reference false there), as the check's own verdict takes
    assert (ref_forward_runs("dapo", None), ref_forward_runs("dapo", "0.6"), ref_forward_runs("dapo", "0.5")) == (
        False, False, True)
    written, notes = _write(cli, tmp_path, NO_REF.replace("ALGORITHM", "dapo"), "--token-budget", "default")
    assert "actor: {ppo_max_token_len_per_gpu: 32768}" in written
    assert notes.startswith(RAISED)


def test_a_quoted_budget_kept_is_left_as_written(cli: Cli, tmp_path: Path) -> None:
    # the actor's "20000" (a string Trinity's typed config converts) is kept: --write leaves its text, and the JSON
    # names no change of it
    text = BASE.replace("algorithm_type: ppo", "algorithm_type: grpo") + (
        '    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: "20000"}\n')
    config = tmp_path / "c.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    assert status == 0 and json.loads(out)[0]["config_keys_changed"] == []
    written, notes = _write(cli, tmp_path, text)
    assert 'actor: {ppo_max_token_len_per_gpu: "20000"}' in written
    assert "ppo_max_token_len_per_gpu 20000 kept, below the plan's 32768" in notes


def test_the_checks_critic_budget_line_says_write_sets_it(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(BASE + "    critic:\n      ppo_max_token_len_per_gpu: 65536\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json")
    problems = json.loads(out)[0]["current"]["config_problems"]
    # budgetrule87: above the verdict's budget, the check fails for it (a trained critic's budget, lowered, fits)
    assert status == 1 and (
        "trainer.trainer_config.critic.ppo_max_token_len_per_gpu 65536 is above the verdict's 32768 tokens per GPU: "
        "on verl before 0.8 the critic's own update takes 65536 tokens per GPU, where the memory model counts it at "
        "the verdict's 32768 (at 65536, 78.8 GiB per H20-96GB GPU, of 87.9 usable); --write sets it to the plan's"
    ) in problems  # critic90: its own update's peak at its budget, named (it was "at that budget", no figure)


def test_the_critic_forwards_budget_line_names_its_tokens_and_what_the_memory_model_counts() -> None:
    # critic90: the value forward's line says what it takes and that the memory model counts the update, not it
    assert critic_budget_note(FORWARD, 65536, "the verdict's 32768 tokens per GPU", 65536, 32768) == (
        f"{FORWARD} 65536 is above the verdict's 32768 tokens per GPU: on verl before 0.8 the critic's value forward "
        "takes 65536 tokens per GPU, where the memory model counts its own update at the verdict's 32768 (and no "
        "forward apart: it holds no gradients); --write sets it to the plan's")
    # criticdata90: the need the verdict computes goes after the training budget's figure; the forward's takes none
    assert critic_budget_note(TRAINING, 131072, "the verdict's 16384 tokens per GPU", 131072, 16384,
                              need=" (at 131072, 9.9 GiB)") == (
        f"{TRAINING} 131072 is above the verdict's 16384 tokens per GPU: on verl before 0.8 "
        f"{critic_budget_counted_words(131072, 16384)} (at 131072, 9.9 GiB); --write sets it to the plan's")
    assert critic_budget_note(FORWARD, 65536, "x", 65536, 32768, need=" (at 65536, 9.9 GiB)") == critic_budget_note(
        FORWARD, 65536, "x", 65536, 32768)


# solvebest: solver/cluster/options.py's `Planner.asks_solve_best`


def test_without_estimates_no_solve_best_is_asked(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --no-estimate: solve's best is the tables' plan, so none is asked (a question would be Ctrl-C here)
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET, encoding="utf-8")
    asked: list[str] = []

    def interrupted(planner: Planner, pool: Any, job: Any, plan: Any) -> Any:
        asked.append(job.name)
        raise KeyboardInterrupt

    monkeypatch.setattr(Planner, "solve_best", interrupted)
    status, out, _ = cli("cluster", str(path), "--no-estimate", "--json")
    answer = json.loads(out)
    assert status == 0 and asked == []
    assert [("solve_best" in placed) for placed in answer["placements"]] == [False] * 4
    assert (answer["interrupted"], answer["solve_best_unasked"]) == (False, 0)


@pytest.mark.parametrize(("estimate", "unasked"), [("auto", 4), ("never", 0)])
def test_ctrl_c_before_solve_best_asks_none_and_counts_the_jobs_that_would_ask(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, estimate: str, unasked: int) -> None:
    # Ctrl-C while widening (before solve's best is asked): no question asked; the four jobs on the tables' plans
    # counted unasked, none where no question would be asked (estimates off)
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET, encoding="utf-8")
    asked: list[str] = []

    def interrupted(*args: object, **kwargs: object) -> dict[str, Any]:
        raise KeyboardInterrupt

    def counted(planner: Planner, pool: Any, job: Any, plan: Any) -> Any:
        asked.append(job.name)
        return None

    monkeypatch.setattr(solver.cluster.search, "widen_jobs", interrupted)
    monkeypatch.setattr(Planner, "solve_best", counted)
    result = solver.place(path, estimate=estimate)
    assert (result.interrupted, asked, result.solve_best_unasked, result.wall_clock_stopped) == (
        True, [], unasked, ())
    assert [placement.solve_best for placement in result.placements] == [None] * 4
