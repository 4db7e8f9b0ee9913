"""Tests of session 82's mutants43: two survivors of mutants42 that were real bugs, and mutants that the merges' own
tests left alive. C-26: ``--write`` judged a role's own token budget against what the roles take with the config's
own ``trainer.max_token_len_per_gpu``, though it writes the plan's there, so an actor's lower budget was raised
"without effect" where the ref takes the plan's. A-26: a key a ``<<: [*o, *t]`` list merges in was said written
at the first mapping holding it, where the config as read (PyYAML 6.0.4 takes the last) had another's value."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_aliaskeys_s82 import HEAD, MODEL
from test_criticbudget_s82 import _critic, _write
from test_dpopairs_s82 import DYNAMIC, PAIR, UNSET, _dpo, _lines
from test_rolebudget2_s81 import BASE
from test_rolebudget_s81 import ACTOR
from test_smallslips41_s82 import _another_critic_at_sp_1
from test_solvebest_s82 import FLEET

import solver
import solver.clock
import solver.cluster
import solver.solve
from solver.cluster.options import Planner, WallClockPassed
from solver.trinity import ROLE_KEYS_IGNORED, config_key_changes, load_config_mapping, patched_trinity_config
from solver.trinity.keys import value_at
from solver.trinity.reader import OneLimit, prompt_room_words

Cli = Callable[..., tuple[int, str, str]]
ACTOR_18000 = (BASE.replace("  max_token_len_per_gpu: 32768\n", "  max_token_len_per_gpu: 20000\n")
               + "      actor: {ppo_max_token_len_per_gpu: 18000}\n")
"""GRPO Qwen3-8B at 32768 tokens on 6 trainer H20s at SP 2: the trainer's 20000, the actor's own 18000 (the ref
takes the trainer's)."""


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def _keys(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.lstrip().startswith("#")]


def test_a_roles_lower_budget_is_kept_where_the_ref_takes_the_plans_trainer_budget(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # C-26: --write sets the trainer's to the plan's 32768, which the ref then takes: the plan's budget has effect,
    # so the actor's 18000 (it holds a sequence: at least ceil(32768 / 2)) is kept, not raised to 32768
    monkeypatch.chdir(tmp_path)
    Path("c.yaml").write_text(ACTOR_18000)
    status, _, err = cli("--from-config", "c.yaml", "--gpu", "h20", "--token-budget", "default", "--write", "w.yaml")
    written = Path("w.yaml").read_text()
    assert status == 0 and _keys(written) == _keys(ACTOR_18000.replace(": 20000", ": 32768"))
    assert err.replace("solve: note: w.yaml: ", "NOTE ") == (
        f"NOTE {ACTOR} 18000 kept, below the plan's 32768: it holds a sequence of the plan's length (ceil(32768 / 2) "
        "= 16384 tokens per GPU or more), so verl takes it, splitting that role's batch into more micro-batches of "
        f"less memory, which the plan's figure bounds ({ROLE_KEYS_IGNORED})\n")
    # --write -> --check -> --write: the copy trains as it is, and a second --write keeps its keys
    (command,) = [line.removeprefix("#   solve ") for line in written.splitlines() if line.startswith("#   solve ")]
    status, out, _ = cli(*shlex.split(command))
    assert status == 0 and "token budget   max_token_len_per_gpu = 32768" in out
    options = [option for option in shlex.split(command) if option != "--check"]
    assert cli(*options, "--write", "again.yaml")[0] == 0
    assert _keys(Path("again.yaml").read_text()) == _keys(written)


def test_a_key_a_merge_list_takes_from_its_second_mapping_is_written_at_that_mapping() -> None:
    # A-26: dummy merges other (&o) and trainer (&t), both setting the SP; the patch sets trainer's; the config as
    # read (PyYAML 6.0.4, as OmegaConf loads it) takes trainer's for dummy, so dummy's change is written there
    text = (HEAD + MODEL + "other: &o {ulysses_sequence_parallel_size: 1, y: 1}\ntrainer: &t\n"
            "  ulysses_sequence_parallel_size: 1\nexplorer:\n"
            "  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n"
            "  dummy:\n    <<: [*o, *t]\n    own: 1\n")
    catalog = solver.load_catalog()
    query = solver.api.config_query(catalog, solver.trinity.read_trinity_config(text, "c", {}), gpu="h100")
    (answer,) = solver.api.answer_query(query, catalog)
    assert answer.best is not None and (answer.best.sp, answer.best.max_token_len_per_gpu) == (2, 16384)
    model = catalog.model("Qwen3-8B")
    changes = [change.model_dump(mode="json") for change in config_key_changes(text, answer.best, model, environ={})]
    assert changes == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2},
        {"key": "explorer.dummy.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2,
         "written_at": "trainer.ulysses_sequence_parallel_size"},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384},
        {"key": "explorer.dummy.max_token_len_per_gpu", "config_value": None, "plan_value": 16384,
         "written_at": "trainer.max_token_len_per_gpu"}]
    # each written_at holds the value the copy, as read, has at its key; other's is as it was
    copy = load_config_mapping(patched_trinity_config(text, answer.best, model, environ={}).text, "c")
    for change in changes:
        place = change.get("written_at", change["key"]).split(".")
        assert value_at(copy, tuple(place)) == change["plan_value"]
    assert copy["other"]["ulysses_sequence_parallel_size"] == 1


# solvebest: the greedy baseline's solve_best (S-24), and the note where the time limit and Ctrl-C both cut (S-26)


def test_the_greedy_baseline_names_solves_best_for_the_jobs_on_the_tables_plans(tmp_path: Path) -> None:
    # the baseline takes each job's first plan: lora-a and lora-b on the tables' inferred SP=4 (4 trainer GPUs), a node
    # each, which leaves lora-c and full-8b no room; on their 4 trainer GPUs solve's best is the estimate Env + SP=2
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET, encoding="utf-8")
    catalog = solver.load_catalog()
    result = solver.cluster.greedy(solver.load_fleet(path, catalog), catalog)
    best = {placed.job: (placed.plan.setting.label, placed.plan.evidence, None if placed.solve_best is None else (
        placed.solve_best.setting.label, placed.solve_best.gpus, placed.solve_best.cost, placed.solve_best.evidence))
        for placed in result.placements}
    estimate = ("Env + SP=2", 4, 0.27775, "estimated")
    assert best == {"lora-a": ("SP=4", "inferred", estimate), "lora-b": ("SP=4", "inferred", estimate)}
    assert [unplaced.job for unplaced in result.unplaced] == ["lora-c", "full-8b"]
    assert result.solve_best_unasked == 0


def test_where_the_time_limit_cut_a_question_before_ctrl_c_the_note_names_the_time_limit(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # lora-a's question past the deadline, then Ctrl-C on lora-b's: the four left unasked, the wall clock named as
    # what stopped the step, and the note says the time limit ran out (not Ctrl-C) and to raise it
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET, encoding="utf-8")
    calls: list[str] = []

    def cut_then_interrupted(planner: Planner, *args: Any) -> Any:
        calls.append(args[1].name)
        raise WallClockPassed if len(calls) == 1 else KeyboardInterrupt

    monkeypatch.setattr(Planner, "solve_best", cut_then_interrupted)
    status, out, _ = cli("cluster", str(path), "--json")
    answer = json.loads(out)
    assert status == 130 and calls == ["lora-a", "lora-b"]
    assert (answer["interrupted"], answer["solve_best_unasked"], answer["wall_clock_stopped"]) == (
        False, 4, ["solve best"])  # the placement whole: not "interrupted" (s83: it was), 130 still
    calls.clear()
    status, out, _ = cli("cluster", str(path))
    assert status == 130 and " ".join(out.split()).endswith(
        "note: the time limit ran out before solve's best on their trainer GPUs was asked for 4 jobs placed on the "
        "tables' plans (where it is a cheaper estimate, a line under the pool's table names it; raise --time-limit)")


# deadlinewords: a deadline with no second left has passed (D-3)


def test_a_call_deadline_with_no_time_left_has_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    # clock.seconds_left says 0 or less once the deadline has passed: at 0 the call's deadline has passed
    with solver.solve.call_deadline(60):
        assert not solver.solve.deadline_passed()
        monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: 0.0)
        assert solver.solve.deadline_passed()
    assert not solver.solve.deadline_passed()  # no deadline outside the block


def test_a_key_merged_in_from_a_mapping_in_a_list_names_no_place() -> None:
    # review82a/fragcheck6's `_first_places` walks the mappings' own keys, not through a list nor through what a <<
    # merges in: trainer and other merge in a mapping anchored in the list bases, whose budget --write raises there;
    # the list is named whole (its item as a dotted key names nothing), and neither merge is said written at the
    # other's place
    text = (HEAD + MODEL + "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\nbases:\n  - &a\n"
            "    trainer_config: {actor_rollout_ref: {actor: {ppo_max_token_len_per_gpu: 4000}}}\n"
            "trainer: {<<: *a}\nother: {<<: *a}\n")
    catalog = solver.load_catalog()
    query = solver.api.config_query(catalog, solver.trinity.read_trinity_config(text, "c", {}), gpu="h100")
    (answer,) = solver.api.answer_query(query, catalog)
    assert answer.best is not None and (answer.best.sp, answer.best.max_token_len_per_gpu) == (2, 16384)
    budget = "trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"

    def bases(value: int) -> list[dict[str, Any]]:
        return [{"trainer_config": {"actor_rollout_ref": {"actor": {"ppo_max_token_len_per_gpu": value}}}}]

    assert [change.model_dump(mode="json") for change in config_key_changes(
        text, answer.best, catalog.model("Qwen3-8B"), environ={})] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384},
        {"key": f"trainer.{budget}", "config_value": 4000, "plan_value": 16384},
        {"key": "bases", "config_value": bases(4000), "plan_value": bases(16384)},
        {"key": f"other.{budget}", "config_value": 4000, "plan_value": 16384}]


def test_a_response_limit_not_below_the_length_gives_prompts_no_room_words() -> None:
    # smallslips41's prompt_room_words: only a response limit below the length leaves prompts the rest
    assert prompt_room_words(OneLimit("max_response_tokens", 32768, 32768)) is None
    assert prompt_room_words(OneLimit("max_prompt_tokens", 2048, 32768)) is None
    assert prompt_room_words(OneLimit("max_response_tokens", 30720, 32768)) == (
        "model.max_response_tokens 30720 kept, and model.max_prompt_tokens is unset: Trinity gives prompts the rest "
        "of model.max_model_len 32768, max_prompt_tokens = 32768 - 30720 = 2048, and the rollout stops each response "
        "at 30720 tokens; raise max_response_tokens for longer responses")


def test_a_critics_own_sp_leaves_the_actors_budget_judged_at_the_plans(cli: Cli, tmp_path: Path) -> None:
    # smallslips41's _budget_sp: a critic of another model at its own SP 1 (kept by --write) is judged there; the
    # actor's own 20000 at the plan's SP 2, where ceil(32768 / 2) = 16384 holds a sequence: kept
    text = _another_critic_at_sp_1(_critic(ppo="32768")).replace(
        "    critic:\n", "    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: 20000}\n    critic:\n")
    written, notes = _write(cli, tmp_path, text)
    assert yaml.safe_load(written)["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] == {
        "ppo_max_token_len_per_gpu": 20000}
    # (the copy's first line, on the critic's SP 1 that --write keeps, is criticsp's, s83)
    assert notes.split("\n", 1)[1] == (
        f"NOTE {ACTOR} 20000 kept, below the plan's 32768: it holds a sequence of the plan's length "
        "(ceil(32768 / 2) = 16384 tokens per GPU or more), so verl takes it, splitting that role's batch "
        f"into more micro-batches of less memory, which the plan's figure bounds ({ROLE_KEYS_IGNORED})\n")
    assert notes.startswith("solve: warning: ") and "critic.ulysses_sequence_parallel_size 1 is not " in notes


@pytest.mark.parametrize(("algorithm", "critic_model", "sp"), [
    ("ppo", "Qwen/Qwen3-8B", 2),  # the plan's model named as the critic's: the plan's SP, as with none named
    ("ppo", "/models/critic", 1),  # another model: its own SP kept
    ("grpo", None, 1)],  # no critic trained: its keys left as they are
    ids=["critic-named-as-the-model", "another-model", "no-critic-trained"])
def test_write_sets_the_critics_own_sp_only_for_a_critic_of_the_plans_model(
        cli: Cli, tmp_path: Path, algorithm: str, critic_model: str | None, sp: int) -> None:
    # review82a's _critic_sp_keys: the critic's own SP 1 beside the plan's SP 2
    text = _critic(ppo="32768").replace("    critic:\n", "    critic:\n      ulysses_sequence_parallel_size: 1\n")
    text = text.replace("algorithm_type: ppo", f"algorithm_type: {algorithm}")
    if critic_model is not None:
        text = text.replace("max_model_len: 32768}", f"max_model_len: 32768, critic_model_path: {critic_model}}}")
    written, _ = _write(cli, tmp_path, text)
    assert yaml.safe_load(written)["trainer"]["trainer_config"]["critic"]["ulysses_sequence_parallel_size"] == sp


def test_write_adds_no_critic_sp_where_the_config_sets_none(cli: Cli, tmp_path: Path) -> None:
    # unset, Trinity fills it from the trainer's (the plan's): --write leaves it unset
    written, _ = _write(cli, tmp_path, _critic(ppo="32768"))
    critic = yaml.safe_load(written)["trainer"]["trainer_config"]["critic"]
    assert critic["ppo_max_token_len_per_gpu"] == 32768 and "ulysses_sequence_parallel_size" not in critic


# dpopairs: the actor's own dynamic batch key off is not told for DPO (DP-5); 0.6 names the trainer's (DP-6)


@pytest.mark.parametrize("version", [None, "0.5", "0.6"])
def test_dpo_with_the_actors_own_dynamic_batch_key_off_is_told_nothing(version: str | None) -> None:
    config = _dpo(use_dynamic_bsz=False)
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = False
    assert _lines(config, version) == []


def test_trinity_06_names_the_trainers_dynamic_batch_key_beside_the_actors_own() -> None:
    # Trinity 0.6 sets the actor's to the trainer's (unset: on), so the line names the trainer's, not the actor's
    config = _dpo()
    config["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]["use_dynamic_bsz"] = True
    assert _lines(config, "0.6") == [("dpo-pair-dynamic", DYNAMIC.format(key="trainer.use_dynamic_bsz", shown=UNSET)
                                      + PAIR["0.6"])]


def test_write_keeps_the_braces_of_an_anchored_one_key_mapping_in_a_flow_list(cli: Cli, tmp_path: Path) -> None:
    # ruamel writes a one-key mapping in a flow list without braces, [&a x: 1], where the anchor names the key x: the
    # copy's << then merged a string, which PyYAML refuses ("expected a mapping ... for merging"), and --write exited 2
    # saying the config (fine) was malformed; the braces are kept
    config = tmp_path / "c.yaml"
    config.write_text(HEAD + MODEL + "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
                      "bases: [&a {x: 1}]\ntrainer: {<<: *a}\n")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(tmp_path / "w.yaml"))
    assert status == 0, err
    written = (tmp_path / "w.yaml").read_text()
    assert ("bases: [&a {x: 1}]\n"
            "trainer: {<<: *a, ulysses_sequence_parallel_size: 2, max_token_len_per_gpu: 16384}\n") in written
    assert load_config_mapping(written, "w.yaml")["trainer"]["x"] == 1
