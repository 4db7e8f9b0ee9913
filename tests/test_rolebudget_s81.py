"""A role's own lower token budget (session 81, rolebudget): persona59 (s80) found ``--write`` and ``--check``'s
apply lines raising ``actor.ppo_max_token_len_per_gpu: 16384`` under a trainer-wide 32768 to the plan's 32768. verl
asserts only that a micro-batch, budget x SP tokens, holds the batch's longest sequence (``rearrange_micro_batches``,
``utils/seqlen_balancing.py:382`` in verl 0.7.0; Trinity raises a budget below ``ceil(L / SP)``,
``_adjust_token_len_if_needed``) and splits a batch into more micro-batches below that: a lower budget only lowers
that role's memory, which the plan's figure bounds. So a role's own budget from ``ceil(L / SP)`` up to the plan's is
kept; one above the plan's is lowered to it, one below ``ceil(L / SP)`` (no sequence fits) raised to it, and one that
repeats the trainer's (an alias) goes with it; each note says why."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_persona59_s80 import FITS
from test_trinity import vanilla_plan

import solver
from solver.api import answer_query, config_query
from solver.trinity import ROLE_KEYS_IGNORED, config_keys_changed, read_trinity_config
from solver.trinity.plan_keys import keys_for_plan

Cli = Callable[..., tuple[int, str, str]]
INTERNLM2 = Path(__file__).resolve().parent / "data" / "hf-configs" / "internlm2-7b.json"
ACTOR = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
REF = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
ROLLOUT = "trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"
BASE = FITS.replace("  max_token_len_per_gpu: 16384\n", "")
"""persona59's GRPO Qwen3-8B config at SP 2, without a token budget of its own."""
WIDE = BASE + "  max_token_len_per_gpu: 32768\n"
"""Trainer-wide 32768 at SP 2 for 32768 tokens: Trinity's default, the plan's budget on 6 H20s (SP=2)."""
KEPT = ("kept, below the plan's 32768: it holds a sequence of the plan's length (ceil(32768 / 2) = 16384 tokens per "
        "GPU or more), so verl takes it, splitting that role's batch into more micro-batches of less memory, which "
        f"the plan's figure bounds ({ROLE_KEYS_IGNORED})")
OVERRIDES = f"set by hand, it overrides trainer.max_token_len_per_gpu for its role ({ROLE_KEYS_IGNORED})"


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        monkeypatch.delenv(name, raising=False)


def _roles(actor: str = "", ref: str = "", rollout: str = "") -> str:
    """The roles' own budgets under ``trainer.trainer_config``, each given as written (empty: unset); the rollout's
    with ``rollout_correction.bypass_mode`` false, so that the old log-prob recompute that reads it runs (bypass90:
    true, the default, runs none, and ``--write`` leaves the rollout's as written)."""
    lines = [f"      {role}: {{{key}: {value}}}\n" for role, key, value in (
        ("actor", "ppo_max_token_len_per_gpu", actor), ("ref", "log_prob_max_token_len_per_gpu", ref),
        ("rollout", "log_prob_max_token_len_per_gpu", rollout)) if value]
    bypass = "    algorithm: {rollout_correction: {bypass_mode: false}}\n" if rollout else ""
    return "  trainer_config:\n    actor_rollout_ref:\n" + "".join(lines) + bypass


def _changed(text: str) -> list[str]:
    """`config_keys_changed` for the best plan of `text` on H20s at Trinity's default budget (``--token-budget
    default``), as ``--check``'s apply lines list them."""
    catalog = solver.load_catalog()
    config = read_trinity_config(text, "c.yaml", {})
    query = config_query(catalog, config, gpu="h20", token_budget="default")
    best = answer_query(query, catalog)[0].best
    assert best is not None and (best.sp, best.max_token_len_per_gpu) == (2, 32768)
    return config_keys_changed(text, best, catalog.model("Qwen3-8B"), name="c.yaml", environ={})


def _write(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[str, str]:
    """``--write``'s copy of `text` and its notes on stderr, planned with `options` (``--gpu h20`` where none are
    given); it must succeed."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), *(options or ("--gpu", "h20")), "--write", str(written))
    assert status == 0
    return written.read_text(), err.replace(f"solve: note: {written}: ", "NOTE ")


def test_persona59s_actor_budget_under_a_wider_trainers_is_kept_with_a_note(cli: Cli, tmp_path: Path) -> None:
    text = WIDE + _roles(actor="16384")
    assert _changed(text) == []  # was [f"{ACTOR}: 32768  # now 16384"]
    written, notes = _write(cli, tmp_path, text)
    assert yaml.safe_load(written) == yaml.safe_load(text)
    assert notes == f"NOTE {ACTOR} 16384 {KEPT}\n"
    # The copy, checked: it trains, every key is the plan's already, and the kept budget is said to be cautious.
    config = tmp_path / "w.yaml"
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check")
    assert status == 0 and "which the plan changes too" not in out
    assert "w.yaml has these keys already: --write FILE writes a copy that differs in its" in out
    assert (f"but: {ACTOR} 16384 is below Trinity's default ceil(2 x 32768 / 2) = 32768, which the tables measured: "
            "fewer tokens per GPU than the verdict assumes (so it is cautious; each step takes more micro-batches)"
            ) in " ".join(out.split())
    (answer,) = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--check", "--json")[1])
    assert (answer["current"]["trains"], answer["plans"][0]["max_token_len_per_gpu"]) == (True, 32768)


@pytest.mark.parametrize(("roles", "key"), [(_roles(ref="16384"), REF), (_roles(rollout="20000"), ROLLOUT)],
                         ids=["ref", "rollout"])
def test_the_refs_and_the_rollouts_own_lower_budgets_are_kept(cli: Cli, tmp_path: Path, roles: str,
                                                              key: str) -> None:
    text = WIDE + roles
    assert _changed(text) == []
    written, notes = _write(cli, tmp_path, text)
    assert yaml.safe_load(written) == yaml.safe_load(text)
    budget = yaml.safe_load(text)["trainer"]["trainer_config"]["actor_rollout_ref"][key.split(".")[-2]]
    assert notes == f"NOTE {key} {budget[key.split('.')[-1]]} {KEPT}\n"


def test_a_budget_that_holds_no_sequence_is_raised_and_one_above_the_plans_lowered(cli: Cli, tmp_path: Path) -> None:
    # 8192 x SP 2 holds no sequence of 32768 (Trinity raises the actor's; verl stops on the rollout's, a forward's):
    # the plan's 32768. 65536 would take more tokens per GPU than the plan counts: the plan's too.
    text = WIDE + _roles(actor="8192", ref="65536", rollout="16384")
    assert _changed(text) == [f"{ACTOR}: 32768  # now 8192", f"{REF}: 32768  # now 65536"]
    written, notes = _write(cli, tmp_path, text)
    roles = yaml.safe_load(written)["trainer"]["trainer_config"]["actor_rollout_ref"]
    assert (roles["actor"], roles["ref"], roles["rollout"]) == (
        {"ppo_max_token_len_per_gpu": 32768}, {"log_prob_max_token_len_per_gpu": 32768},
        {"log_prob_max_token_len_per_gpu": 16384})
    assert notes == (f"NOTE {ACTOR} 8192 raised to the plan's 32768, as below ceil(32768 / 2) = 16384 it holds no "
                     f"sequence of the plan's length: {OVERRIDES}\n"
                     f"NOTE {REF} 65536 lowered to the plan's 32768: {OVERRIDES}\n"
                     f"NOTE {ROLLOUT} 16384 {KEPT}\n")


def test_a_budget_repeating_the_trainers_goes_with_it_and_the_rollouts_repeating_a_kept_actors_stays(
        cli: Cli, tmp_path: Path) -> None:
    # The trainer's own 24576 caps the plan; --token-budget default plans at 32768, raising the trainer's, and the
    # actor's alias of it with it (one number of the user's). The ref's own 20000 is raised too (rolebudget2_s81: it
    # was kept, which left the asked 32768 no role on verl before 0.8: the roles took 24576 at the most); the rollout's
    # 8192, which holds no sequence, is raised. A rollout repeating a kept actor's own budget keeps it too.
    text = BASE + "  max_token_len_per_gpu: &budget 24576\n" + _roles(actor="*budget", ref="20000", rollout="8192")
    assert _changed(text) == [f"{ACTOR}: 32768  # now 24576", f"{REF}: 32768  # now 20000",
                              f"{ROLLOUT}: 32768  # now 8192"]
    written, notes = _write(cli, tmp_path, text, "--gpu", "h20", "--token-budget", "default")
    assert "  max_token_len_per_gpu: &budget 32768\n" in written and "{ppo_max_token_len_per_gpu: *budget}" in written
    assert notes == (f"NOTE {ACTOR} 24576 raised to the plan's 32768 with trainer.max_token_len_per_gpu, whose value "
                     f"it repeats: {OVERRIDES}\n"
                     f"NOTE {REF} 20000 raised to the plan's 32768, as the plan's budget is above the most the "
                     "config's roles take, 24576: kept, it would leave the plan's budget without effect on verl before "
                     f"0.8: {OVERRIDES}\n"
                     f"NOTE {ROLLOUT} 8192 raised to the plan's 32768, as below ceil(32768 / 2) = 16384 it holds no "
                     f"sequence of the plan's length: {OVERRIDES}\n")
    assert _changed(WIDE + _roles(actor="20000", rollout="20000")) == []


def test_a_role_budget_that_is_no_whole_number_is_one_line_exit_2_and_no_file(cli: Cli, tmp_path: Path) -> None:
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(WIDE + _roles(actor="16384.5"))
    assert cli("--from-config", str(config), "--gpu", "h20", "--write", str(written)) == (
        2, "", f"solve: error: --from-config {config}: {ACTOR} must be a whole number, got 16384.5\n")
    assert not written.exists()


def test_a_kept_budget_of_a_plan_with_padded_micro_batches_is_said_to_be_unread(cli: Cli, tmp_path: Path) -> None:
    # InternLM2's plans turn dynamic batch sizes off (one padded sequence per micro-batch): no budget is read, so the
    # note says so, not that verl splits the batch by it.
    text = ("algorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
            "model: {model_path: internlm/internlm2-7b, max_model_len: 8192}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
            "trainer:\n  ulysses_sequence_parallel_size: 1\n" + _roles(actor="9000"))
    _, notes = _write(cli, tmp_path, text, "--model-config", str(INTERNLM2), "--gpu", "h100")
    assert (f"NOTE {ACTOR} 9000 kept, below the plan's 16384: unread, as the plan turns dynamic batch sizes off (one "
            f"padded sequence per micro-batch) ({ROLE_KEYS_IGNORED})\n") in notes


@pytest.mark.parametrize(("algorithm", "written"), [("dapo", [16384]), ("grpo", [])])
def test_a_ref_that_runs_no_forward_takes_no_budget_that_would_keep_the_actors_below_the_plans(algorithm: str,
                                                                                               written: list[int]):
    # mutants52: the ref's budget (the trainer's, the plan's 16384) counted among those the roles take where the
    # algorithm runs no ref forward, so that the actor's own 12000 was kept below the plan's, which then bound nothing
    actor = {"actor": {"ppo_max_token_len_per_gpu": 12000}}
    config = {"algorithm": {"algorithm_type": algorithm}, "trainer": {"trainer_config": {"actor_rollout_ref": actor}}}
    keys = keys_for_plan(vanilla_plan(), solver.load_catalog().model("4B"), config)
    assert [key.value for key in keys if ".".join(key.path) == ACTOR] == written
