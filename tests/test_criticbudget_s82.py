"""The critic's own token budgets and the roles' cap (session 82, criticbudget). (1) ``--write`` set none of the PPO
critic's own budgets (``trainer.trainer_config.critic.ppo_max_token_len_per_gpu`` and
``forward_max_token_len_per_gpu``, the keys of Trinity 0.5.1's ``common/verl_config.py:269-270``, 0.5.2's
``trainer/verl/verl_config.py:271-272`` and 0.6.0's ``verl_legacy/verl_config.py:277-278``, frozen to the trainer's on
verl 0.8, ``trainer/verl/config.py:736-741``): one above the plan's was kept with a note, one below ``ceil(L/SP)``
left to stop verl. Where the algorithm trains a critic they now go as a role's: above the plan's lowered, below
``ceil(L/SP)`` raised, between kept, an alias going with the budget it repeats; the critic caps no plan, so a lower one
of its own is kept whatever the roles take. (2) The most the roles take counted the ref where no ref forward runs
(``use_reference`` false: asymre; dapo on Trinity 0.6 alone), so an asked budget kept the actor's lower one and the
copy's own check planned lower: it counts the ref only where its forward runs (with LoRA it does: the actor without its
adapter runs it with the ref's budget). (3) The fragment's header says that a forward's budget below ``ceil(L/SP)``
stops verl. Each ``--write``, then ``--check`` and a second ``--write`` of the copy, is a fixed point."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_rolebudget_s81 import ACTOR

import solver
from solver.api import answer_query, config_query
from solver.trinity import ROLE_KEYS_IGNORED, config_keys_changed, read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CRITIC = "trainer.trainer_config.critic.ppo_max_token_len_per_gpu"
FORWARD = "trainer.trainer_config.critic.forward_max_token_len_per_gpu"
ENV = "expandable_segments:True"
BASE = """\
algorithm: {algorithm_type: ppo, repeat_times: 8}
buffer: {batch_size: 96}
model: {model_path: Qwen/Qwen3-8B, max_prompt_tokens: 2048, max_response_tokens: 30720, max_model_len: 32768}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
trainer:
  ulysses_sequence_parallel_size: 2
  max_token_len_per_gpu: 32768
  trainer_config:
"""
"""PPO on Qwen3-8B at 32768 tokens, 6 trainer H20s at SP 2 (Env; the critic resident), the trainer's budget Trinity's
default, 32768: the plan's budget; ``ceil(32768 / 2) = 16384`` the least that holds a sequence."""
OVERRIDES = f"set by hand, it overrides trainer.max_token_len_per_gpu for its role ({ROLE_KEYS_IGNORED})"
KEPT = ("kept, below the plan's 32768: it holds a sequence of the plan's length (ceil(32768 / 2) = 16384 tokens per "
        "GPU or more), so verl takes it, splitting that role's batch into more micro-batches of less memory, which "
        f"the plan's figure bounds ({ROLE_KEYS_IGNORED})")


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", ENV)


def _critic(ppo: str = "", forward: str = "") -> str:
    """`BASE` with the critic's own budgets, each as written (empty: unset)."""
    keys = "".join(f"      {key}: {value}\n" for key, value in (
        ("ppo_max_token_len_per_gpu", ppo), ("forward_max_token_len_per_gpu", forward)) if value)
    return BASE + "    critic:\n" + keys


def _write(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[str, str]:
    """``--write``'s copy of `text` (``c.yaml``, planned on H20s with `options`) and its notes, each ``NOTE`` and its
    words after the copy's name, less the Env note; it must succeed."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", *options, "--write", str(written))
    assert status == 0, err
    notes = [line.replace(f"solve: note: {written}: ", "NOTE ") for line in err.splitlines()
             if "needs Env" not in line]
    return written.read_text(), "".join(f"{line}\n" for line in notes)


def _budgets(written: str) -> dict[str, int]:
    """The critic's own budgets in `written`, by key."""
    return {key: value for key, value in yaml.safe_load(written)["trainer"]["trainer_config"]["critic"].items()
            if key.endswith("max_token_len_per_gpu")}


def _changed(text: str, **asked: str) -> list[str]:
    """`config_keys_changed`'s token budgets for the best plan of `text` on H20s (`asked`: more of ``config_query``'s
    arguments), as ``--check``'s apply lines list them."""
    catalog = solver.load_catalog()
    query = config_query(catalog, read_trinity_config(text, "c.yaml", {}), gpu="h20", **asked)
    best = answer_query(query, catalog)[0].best
    assert best is not None and (best.sp, best.max_token_len_per_gpu) == (2, 32768)
    return [line for line in config_keys_changed(text, best, catalog.model("Qwen3-8B"), name="c.yaml", environ={})
            if "max_token_len_per_gpu" in line]


def _keys(text: str) -> list[str]:
    """`text`'s lines less its comments (a copy's header differs)."""
    return [line for line in text.splitlines() if not line.lstrip().startswith("#")]


def _fixed_point(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str) -> dict[str, object]:
    """The check of ``--write``'s copy (`written`, at ``w.yaml``) as its header's command gives it (its environment
    set): it trains and changes no key, and a second ``--write`` by that command's options leaves its keys as they
    are. The check's JSON answer."""
    monkeypatch.chdir(tmp_path)
    (command,) = [shlex.split(line.removeprefix("#   ")) for line in written.splitlines()
                  if line.startswith("#   ") and " --check " in line]
    while "=" in command[0]:  # the environment the plan was made in
        monkeypatch.setenv(*command.pop(0).split("=", 1))
    assert command[0] == "solve"
    status, out, err = cli(*command[1:], "--json")
    (answer,) = json.loads(out)
    assert status == 0 and answer["current"]["trains"] and answer["config_keys_changed"] == [], err
    options = [option for option in command[1:] if option != "--check"]
    assert cli(*options, "--write", "again.yaml")[0] == 0
    assert _keys((tmp_path / "again.yaml").read_text()) == _keys(written)
    return dict(answer)


def test_the_critics_budget_above_the_plans_is_lowered_and_its_forward_below_the_least_raised(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _critic(ppo="65536", forward="8192")
    # before: [] (and the forward's 8192 x SP 2, which holds no sequence of 32768, stopped verl's value forward)
    assert _changed(text) == [f"{CRITIC}: 32768  # now 65536", f"{FORWARD}: 32768  # now 8192"]
    written, notes = _write(cli, tmp_path, text)
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 32768, "forward_max_token_len_per_gpu": 32768}
    assert notes == (f"NOTE {CRITIC} 65536 lowered to the plan's 32768: {OVERRIDES}\n"
                     f"NOTE {FORWARD} 8192 raised to the plan's 32768, as below ceil(32768 / 2) = 16384 it holds no "
                     f"sequence of the plan's length: {OVERRIDES}\n")
    _fixed_point(cli, tmp_path, monkeypatch, written)


def test_the_critics_own_lower_budgets_are_kept_the_forward_repeating_it_with_it(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _critic(ppo="&c 20000", forward="*c")
    assert _changed(text) == []
    written, notes = _write(cli, tmp_path, text)
    assert yaml.safe_load(written) == yaml.safe_load(text) | {"trainer": yaml.safe_load(written)["trainer"]}
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 20000, "forward_max_token_len_per_gpu": 20000}
    assert "ppo_max_token_len_per_gpu: &c 20000\n" in written and "forward_max_token_len_per_gpu: *c\n" in written
    assert notes == f"NOTE {CRITIC} 20000 {KEPT}\nNOTE {FORWARD} 20000 {KEPT}\n"
    answer = _fixed_point(cli, tmp_path, monkeypatch, written)
    assert answer["plans"][0]["max_token_len_per_gpu"] == 32768  # the critic's caps no plan


def test_the_critics_lower_budget_is_kept_under_an_asked_budget_that_raises_the_roles(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The actor's own 16384 caps the plans; --token-budget default plans at 32768, above what the roles take, so the
    # actor's is raised (kept, the asked budget would reach no role on verl before 0.8). The critic's 20000 caps no
    # plan, and the memory model counts its update at the plan's budget: kept.
    text = (BASE + "    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: 16384}\n"
            "      ref: {log_prob_max_token_len_per_gpu: 16384}\n"
            "    critic:\n      ppo_max_token_len_per_gpu: 20000\n")
    written, notes = _write(cli, tmp_path, text, "--token-budget", "default")
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 20000}
    assert f"NOTE {ACTOR} 16384 raised to the plan's 32768, as the plan's budget is above the most" in notes
    assert f"NOTE {CRITIC} 20000 {KEPT}\n" in notes
    answer = _fixed_point(cli, tmp_path, monkeypatch, written)
    assert (answer["plans"][0]["max_token_len_per_gpu"], answer.get("token_budget_cap")) == (32768, None)


def test_a_critic_budget_repeating_the_trainers_goes_with_it(cli: Cli, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    text = BASE.replace("  max_token_len_per_gpu: 32768\n", "  max_token_len_per_gpu: &budget 24576\n") + (
        "    critic: {ppo_max_token_len_per_gpu: *budget, forward_max_token_len_per_gpu: 24576}\n")
    assert _changed(text, token_budget="default") == [f"{CRITIC}: 32768  # now 24576", f"{FORWARD}: 32768  # now 24576"]
    written, notes = _write(cli, tmp_path, text, "--token-budget", "default")
    assert "  max_token_len_per_gpu: &budget 32768\n" in written
    assert "critic: {ppo_max_token_len_per_gpu: *budget, forward_max_token_len_per_gpu: 32768, " in written
    assert notes == (f"NOTE {CRITIC} 24576 raised to the plan's 32768 with trainer.max_token_len_per_gpu, whose value "
                     f"it repeats: {OVERRIDES}\n"
                     f"NOTE {FORWARD} 24576 raised to the plan's 32768 with trainer.max_token_len_per_gpu, whose value "
                     f"it repeats: {OVERRIDES}\n")
    _fixed_point(cli, tmp_path, monkeypatch, written)


def test_a_config_training_no_critic_keeps_the_critics_keys(cli: Cli, tmp_path: Path) -> None:
    # GRPO builds no critic: its keys are read by nothing, and left as they are, without a note
    text = _critic(ppo="131072", forward="8192").replace("algorithm_type: ppo", "algorithm_type: grpo")
    assert _changed(text) == []
    written, notes = _write(cli, tmp_path, text)
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 131072, "forward_max_token_len_per_gpu": 8192}
    assert "critic" not in notes


NO_REF = BASE.replace("algorithm_type: ppo", "algorithm_type: ALGORITHM") + (
    "    actor_rollout_ref:\n      actor: {ppo_max_token_len_per_gpu: 16384}\n")
"""`BASE` of an ``ALGORITHM`` to replace, the actor's own 16384 (the rollout's takes it; the ref's the trainer's
32768)."""
ALGORITHMS_05 = ("asymre, cispo, dpo, grpo, gspo, mix, mix_chord, multi_step_grpo, on_policy_distill, opmd, ppo, raft, "
                 "rec, reinforceplusplus, rloo, sapo, sft, sppo, topr")
"""The algorithm types every Trinity 0.5 release has (tables/trinity-fields.yaml)."""
RAISED = (f"NOTE {ACTOR} 16384 raised to the plan's 32768, as the plan's budget is above the most the config's roles "
          f"take, 16384: kept, it would leave the plan's budget without effect on verl before 0.8: {OVERRIDES}\n")


@pytest.mark.parametrize(("algorithm", "version", "raised"), [
    ("asymre", None, True), ("dapo", "0.6", True), ("dapo", "0.5", False), ("grpo", None, False)],
    ids=["asymre", "dapo-06", "dapo-05", "grpo"])
def test_the_most_the_roles_take_counts_the_ref_where_its_forward_runs(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, algorithm: str, version: str | None,
        raised: bool) -> None:
    # asymre uses no ref on any release, dapo on Trinity 0.6 alone (its use_reference): no ref forward reads the
    # ref's budget, the trainer's 32768, so the roles take 16384 and the asked 32768 raises the actor's. Before, the
    # ref was counted: the actor's was kept, and the copy's own check planned at 16384, lowering the trainer's.
    text = NO_REF.replace("ALGORITHM", algorithm)
    options = ("--token-budget", "default", *(("--trinity-version", version) if version else ()))
    written, notes = _write(cli, tmp_path, text, *options)
    actor = yaml.safe_load(written)["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert actor == {"ppo_max_token_len_per_gpu": 32768 if raised else 16384}
    scope = "" if version == "0.5" else f" ({ROLE_KEYS_IGNORED})"
    if version == "0.5":  # 0.5 has no dapo: --write warns that it refuses the copy (session 82, algorelease)
        warning, notes = notes.split("\n", 1)
        assert warning == (f"solve: warning: {tmp_path / 'w.yaml'}: algorithm.algorithm_type dapo: Trinity 0.5 has no "
                           f"such algorithm, so it refuses the config as it loads it: name one of {ALGORITHMS_05} (or "
                           "run a release that has it: Trinity 0.6)")
    assert notes.startswith(RAISED.replace(f" ({ROLE_KEYS_IGNORED})", scope) if raised
                            else f"NOTE {ACTOR} 16384 {KEPT.replace(f' ({ROLE_KEYS_IGNORED})', scope)}\n")
    if version != "0.5":  # the copy's check refuses it there, as the warning says
        answer = _fixed_point(cli, tmp_path, monkeypatch, written)
        assert answer["plans"][0]["max_token_len_per_gpu"] == 32768


def test_with_lora_the_refs_forward_runs_and_counts(cli: Cli, tmp_path: Path) -> None:
    # The actor without its adapter computes the ref's log-probs with the ref's budget (compute_log_prob's
    # config_source, fsdp_workers.py:924 in Trinity 0.5.2): the ref takes the trainer's 32768, and the actor's own
    # lower one is kept under the asked budget.
    text = NO_REF.replace("ALGORITHM", "grpo").replace("max_model_len: 32768}",
                                                       "max_model_len: 32768, lora_configs: [{lora_rank: 32}]}")
    written, notes = _write(cli, tmp_path, text, "--token-budget", "default")
    assert yaml.safe_load(written)["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"] == {
        "ppo_max_token_len_per_gpu": 16384}
    assert notes.startswith(f"NOTE {ACTOR} 16384 {KEPT}\n")


def test_the_fragments_header_says_a_forwards_budget_below_the_least_stops_verl(cli: Cli) -> None:
    status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "h20", "--len", "32768", "--critic", "resident", "--emit",
                         "trinity")
    header = " ".join(line.removeprefix("# ") for line in out.split("\nmodel:\n")[0].splitlines())
    assert status == 0 and header.endswith(
        "On verl before 0.8, a hand-set ppo_max_token_len_per_gpu (actor, critic), log_prob_max_token_len_per_gpu "
        "(ref, rollout) or forward_max_token_len_per_gpu (critic) above 32768 overrides max_token_len_per_gpu: lower "
        "it to 32768 or remove it; and the rollout's log_prob_max_token_len_per_gpu or the critic's "
        "forward_max_token_len_per_gpu below ceil(32768 / 2) = 16384 holds no sequence of that length, which Trinity "
        "never raises and verl stops at: raise it to 16384 or more, or remove it.")
    status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "h20", "--len", "32768", "--token-budget", "8192", "--emit",
                         "trinity")
    header = " ".join(line.removeprefix("# ") for line in out.split("\nmodel:\n")[0].splitlines())
    assert status == 0 and header.endswith(
        "On verl before 0.8, a hand-set ppo_max_token_len_per_gpu (actor) or log_prob_max_token_len_per_gpu (ref, "
        "rollout) above 8192 overrides max_token_len_per_gpu: lower it to 8192 or remove it; and the rollout's "
        "log_prob_max_token_len_per_gpu below ceil(32768 / 4) = 8192 holds no sequence of that length, which Trinity "
        "never raises and verl stops at: raise it to 8192 or more, or remove it.")


def test_a_configs_critic_is_counted_at_its_sp_once_for_its_budget_lines(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # smalls93: `_critic_counted_at` ran twice for the same verdict and SP, for the critic's budgets and their lines
    counted_at = solver.api._critic_counted_at
    calls: list[int] = []
    monkeypatch.setattr(solver.api, "_critic_counted_at", lambda *given: calls.append(given[1]) or counted_at(*given))
    config = tmp_path / "c.yaml"
    config.write_text(_critic(ppo="65536"))
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json")
    (answer,) = json.loads(out)
    assert (status, calls) == (1, [2])  # 1: its critic budget is above the verdict's
    assert [code for code in answer["current"]["config_problem_codes"] if "critic-budget" in code] == [
        "critic-budget-above-verdict"]
