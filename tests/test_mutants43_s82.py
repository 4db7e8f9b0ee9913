"""Tests of session 82's mutants43: two survivors of mutants42 that were real bugs, and mutants that the merges' own
tests left alive. C-26: ``--write`` judged a role's own token budget against what the roles take with the config's
own ``trainer.max_token_len_per_gpu``, though it writes the plan's there, so an actor's lower budget was raised
"without effect" where the ref takes the plan's. A-26: a key a ``<<: [*o, *t]`` list merges in was said written
at the first mapping holding it, where the config as read (PyYAML 6.0.4 takes the last) had another's value."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from test_aliaskeys_s82 import HEAD, MODEL
from test_rolebudget2_s81 import BASE
from test_rolebudget_s81 import ACTOR

import solver
from solver.trinity import ROLE_KEYS_IGNORED, config_key_changes, load_config_mapping, patched_trinity_config
from solver.trinity.keys import value_at

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
    # dummy merges other (&o) and trainer (&t), both setting the SP; the patch sets trainer's; the config as
    # read (PyYAML 6.0.4, as OmegaConf loads it) takes trainer's for dummy, so dummy's change is written there
    text = (HEAD + MODEL + "other: &o {ulysses_sequence_parallel_size: 1, y: 1}\ntrainer: &t\n"
            "  ulysses_sequence_parallel_size: 1\nexplorer:\n  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n"
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
