"""A PPO critic's own SP under Trinity 0.6, and the budgets of roles that never run (session 83, criticsp).

(1) ``--check`` judged the critic's own SP (``trainer.trainer_config.critic.ulysses_sequence_parallel_size``) under
``--trinity-version 0.5`` alone. Trinity 0.6.0 on verl before 0.8 reads it as 0.5 does: ``set_if_none`` from the
trainer's (``trainer/verl_legacy/verl_config.py:604``), ``_check_parallel_config`` against the trainer GPUs and the
heads, a ``ValueError`` (``:608``, ``:423-428``), the budget raised at it (``:613``), the critic's worker at it
(``verl_legacy/fsdp_workers.py:1287``). On verl 0.8 or later it freezes the key to the trainer's (``FROZEN_KEYS``,
``trainer/verl/config.py:478``, ``:740``) and runs the critic at its engine's SP, ``critic.fsdp``'s
(``_build_fsdp_engine_config``, ``:514``, the trainer's, deep-merged over by the config's: no frozen key; verl 0.8.0's
``FSDPCriticConfig.__post_init__`` takes ``engine = fsdp``, ``workers/config/critic.py:213``, and runs it there,
``workers/engine/fsdp/transformer_impl.py:220``). So with 0.6, or no release, a ``role-sp-differs`` line (no refusal:
verl 0.8 ignores the key) says each, the critic's budgets are judged at its own SP, and ``--write`` sets
``critic.fsdp.ulysses_sequence_parallel_size`` to the plan's too (not for 0.5, which refuses the section).
(3) ``--write`` lowered or raised the ref's own budget (``log_prob_max_token_len_per_gpu``) where the algorithm
computes no ref log-probs (``use_reference`` false: asymre; ``if self.algorithm.use_reference``,
``trainer/verl/verl_trainer.py:541`` in 0.5.2, ``trainer/verl_trainer.py:512`` in 0.5.1,
``verl_legacy/verl_trainer.py:569`` in 0.6.0), and ``--check`` warned of it below the length: nothing reads it
there, so both leave it. The critic's where none is trained was already left
(test_criticbudget_s82's ``test_a_config_training_no_critic_keeps_the_critics_keys``); with ``--critic none`` the
config's PPO critic still runs, and only a budget below the least that verl stops at is raised
(test_smallslips41_s82's ``test_critic_none_raises_only_a_critic_budget_that_holds_no_sequence``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_criticbudget_s82 import BASE as PPO_BASE

import solver

Cli = Callable[..., tuple[int, str, str]]
BASE = PPO_BASE.replace("algorithm_type: ppo,", "algorithm_type: ALGORITHM,")
"""Qwen3-8B at 32768 tokens on 6 trainer H20s at SP 2 (2 rollout GPUs), the plan's budget 32768: ``ceil(32768 / 2)
= 16384`` holds a sequence at SP 2, ``ceil(32768 / 1) = 32768`` at SP 1."""
SP = "trainer.trainer_config.critic.ulysses_sequence_parallel_size"
ENGINE_SP = "trainer.trainer_config.critic.fsdp.ulysses_sequence_parallel_size"
REF = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
ENGINE_AT_4 = "    critic: {ulysses_sequence_parallel_size: 1, fsdp: {ulysses_sequence_parallel_size: 4}}\n"
"""The critic's own SP 1 and its engine's 4, beside the trainer's 2."""
COUNTED_1 = ("the verdict and its plan count the critic's update at SP 1 (57.2 GiB per H20-96GB GPU, of 87.9 usable), "
             "its token budget raised to hold a sequence there, and the planner's plans at SP 2")
"""What the lines on the critic's own SP 1 and its engine's 4 say is counted (session 84, criticspmem: before, the
critic at the trainer's SP 2): at SP 1 alone (session 85, legacyref: before, at SP 4, 58.8 GiB, which does not divide
the 6 trainer GPUs, where verl 0.8.0's engine fails as it starts, ``transformer_impl.py:226``)."""
FAILS_AT_4 = ("where SP=4 does not divide 6 GPUs: its engine's SP mesh holds 4 of them and it fails as it starts on the "
              "2 left out")
"""What the lines say of the engine's SP 4 on the 6 trainer GPUs."""
MEMORY_DOC = " ".join((Path(__file__).parents[1] / "docs" / "memory.md").read_text().split())


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def _config(algorithm: str, section: str) -> str:
    """`BASE` of `algorithm` with `section` (lines under ``trainer_config``)."""
    return BASE.replace("ALGORITHM", algorithm) + section


def _check(cli: Cli, tmp_path: Path, text: str, *options: str) -> dict[str, object]:
    """``--check --json``'s answer for `text` on H20s with `options`; it must succeed."""
    config = tmp_path / "c.yaml"
    config.write_text(text)
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json", *options)
    assert status == 0, err
    (answer,) = json.loads(out)
    return dict(answer)


def _write(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[dict[str, object], list[str]]:
    """``--write``'s copy of `text` read back, and its stderr lines less the Env note."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", *options, "--write", str(written))
    assert status == 0, err
    return yaml.safe_load(written.read_text()), [line for line in err.splitlines() if "needs Env" not in line]


# (3) the ref's budget where no ref forward runs


@pytest.mark.parametrize("budget", [65536, 8192])
def test_the_refs_budget_is_left_where_the_algorithm_computes_no_ref_log_probs(cli: Cli, tmp_path: Path,
                                                                               budget: int) -> None:
    # asymre's use_reference is false: before, 65536 was lowered to the plan's 32768 and 8192 raised to it (below
    # ceil(32768 / 2) = 16384), each with a note, and --check warned that 8192 x SP 2 is below 32768
    text = _config("asymre", f"    actor_rollout_ref:\n      ref: {{log_prob_max_token_len_per_gpu: {budget}}}\n")
    written, lines = _write(cli, tmp_path, text)
    ref = written["trainer"]["trainer_config"]["actor_rollout_ref"]["ref"]
    assert ref == {"log_prob_max_token_len_per_gpu": budget}
    assert lines == []
    answer = _check(cli, tmp_path, text)
    assert answer["config_keys_changed"] == []
    assert not [words for words in answer["current"]["config_problems"] if REF in words]  # type: ignore[index]


def test_the_refs_budget_is_still_set_where_its_forward_runs(cli: Cli, tmp_path: Path) -> None:
    written, lines = _write(cli, tmp_path, _config(
        "grpo", "    actor_rollout_ref:\n      ref: {log_prob_max_token_len_per_gpu: 65536}\n"))
    assert written["trainer"]["trainer_config"]["actor_rollout_ref"]["ref"] == {"log_prob_max_token_len_per_gpu": 32768}
    assert lines[0].endswith(f"{REF} 65536 lowered to the plan's 32768: set by hand, it overrides "
                             "trainer.max_token_len_per_gpu for its role (on verl before 0.8 only: Trinity 0.6 on verl "
                             "0.8 or later ignores the roles' own token budgets and dynamic-batch keys, taking the "
                             "trainer's)")


# (1) the critic's own SP with Trinity 0.6 or no release


def _problems(answer: dict[str, object]) -> list[str]:
    """The check's problems in words that name the critic's SP."""
    return [words for words in answer["current"]["config_problems"]  # type: ignore[index]
            if words.startswith((SP, ENGINE_SP))]


def test_a_critic_sp_that_06_refuses_before_verl_08_is_said_not_refused(cli: Cli, tmp_path: Path) -> None:
    text = _config("ppo", "    critic: {ulysses_sequence_parallel_size: 5}\n")
    answer = _check(cli, tmp_path, text, "--trinity-version", "0.6")
    # before: nothing said; 0.6 on verl 0.8 ignores the key, so the config is not refused
    assert answer["current"]["trains"] is True  # type: ignore[index]
    assert _problems(answer) == [(
        f"{SP} 5 is not trainer.ulysses_sequence_parallel_size 2: Trinity 0.6 on verl before 0.8 checks the critic's "
        "SP as the actor's and refuses the config (SP=5 does not divide 6 GPUs); Trinity 0.6 on verl 0.8 or later "
        "ignores the key and runs the critic at SP 2; the verdict and the plans count the critic at SP 2: set them "
        "alike (--write does)")]


def test_the_verdicts_plan_counts_the_critic_where_its_line_says(cli: Cli, tmp_path: Path) -> None:
    # checks93b: the line said "the verdict counts the critic's update at SP 1 (57.2 GiB ...), and the plans at SP 2",
    # while current.plan, the verdict's own plan, gave the 57.2 of SP 1: now it names the verdict's plan beside the
    # verdict, and the planner's plans (answer.plans, the critic at their SP 2: 58.8) apart
    text = _config("ppo", "    critic: {ulysses_sequence_parallel_size: 1, fsdp: {ulysses_sequence_parallel_size: 1}}\n")
    answer = _check(cli, tmp_path, text, "--trinity-version", "0.6")
    current, (best, *_) = answer["current"], answer["plans"]
    assert (current["plan"]["critic_pass_gb"], best["critic_pass_gb"]) == (57.17, 58.78)  # type: ignore[index]
    assert (current["plan"]["sp"], best["sp"]) == (2, 2)  # type: ignore[index]
    lines = _problems(answer)
    assert len(lines) == 2
    assert all(f"; {COUNTED_1}: set them alike (--write does)" in line for line in lines)


def test_the_critics_own_and_engine_sp_without_a_release_and_write_sets_both(cli: Cli, tmp_path: Path) -> None:
    text = _config("ppo", ENGINE_AT_4)
    assert _problems(_check(cli, tmp_path, text)) == [(
        f"{ENGINE_SP} 4 is not trainer.ulysses_sequence_parallel_size 2: Trinity 0.6 on verl 0.8 or later takes SP "
        f"4, its engine's over the trainer's (checking it against nothing), {FAILS_AT_4}, and with verl before 0.8 no "
        f"release reads it; {COUNTED_1}: set them alike (--write does)"), (
        f"{SP} 1 is not trainer.ulysses_sequence_parallel_size 2: Trinity with verl before 0.8 runs the critic at SP "
        "1, raising its token budget to hold a sequence there; Trinity 0.6 on verl 0.8 or later ignores the key and "
        f"runs the critic at SP 4 ({ENGINE_SP}), {FAILS_AT_4}; {COUNTED_1}: set them alike (--write does)")]
    written, _ = _write(cli, tmp_path, text)
    critic = written["trainer"]["trainer_config"]["critic"]
    assert (critic["ulysses_sequence_parallel_size"], critic["fsdp"]["ulysses_sequence_parallel_size"]) == (2, 2)
    assert _problems(_check(cli, tmp_path, (tmp_path / "w.yaml").read_text())) == []


def test_the_refs_engine_sp_is_said_and_write_sets_it(cli: Cli, tmp_path: Path) -> None:
    """recompute88: the ref's ``fsdp_config.ulysses_sequence_parallel_size``, which verl 0.8's engine takes (the
    trainer's SP 2 over it: ``workers/config/actor.py:320-321`` in verl 0.8.0), was unread: now a line, and ``--write``
    sets it to the plan's SP."""
    text = _config("grpo", "    actor_rollout_ref: {ref: {fsdp_config: {ulysses_sequence_parallel_size: 4}}}\n")
    engine = "trainer.trainer_config.actor_rollout_ref.ref.fsdp_config.ulysses_sequence_parallel_size"
    def said(checked: str) -> list[str]:
        problems = _check(cli, tmp_path, checked, "--trinity-version", "0.6")["current"]["config_problems"]
        return [words.split(":")[0] for words in problems if words.startswith(engine)]  # type: ignore[attr-defined]

    assert said(text) == [f"{engine} 4 is not trainer.ulysses_sequence_parallel_size 2"]
    written, _ = _write(cli, tmp_path, text, "--trinity-version", "0.6")
    assert written["trainer"]["trainer_config"]["actor_rollout_ref"]["ref"]["fsdp_config"] == {
        "ulysses_sequence_parallel_size": 2}


def test_with_05_write_leaves_the_engine_sp_which_05_refuses_with_its_section(cli: Cli, tmp_path: Path) -> None:
    text = _config("ppo", ENGINE_AT_4)
    written, _ = _write(cli, tmp_path, text, "--trinity-version", "0.5")
    critic = written["trainer"]["trainer_config"]["critic"]
    assert (critic["ulysses_sequence_parallel_size"], critic["fsdp"]) == (2, {"ulysses_sequence_parallel_size": 4})


def test_with_06_the_critics_budget_is_judged_at_its_own_sp(cli: Cli, tmp_path: Path) -> None:
    # 20000 x SP 1 = 20000 < 32768 (before: judged at the trainer's SP 2, 40000, no line)
    text = _config("ppo", "    critic: {ulysses_sequence_parallel_size: 1, ppo_max_token_len_per_gpu: 20000}\n")
    current = _check(cli, tmp_path, text, "--trinity-version", "0.6")["current"]
    problems = current["config_problems"]  # type: ignore[index]
    assert ("trainer.trainer_config.critic.ppo_max_token_len_per_gpu 20000 x SP 1 (the critic's) is below "
            "model.max_model_len 32768: Trinity 0.6 on verl before 0.8 raises it to ceil(32768 / 1) = 32768, and on "
            "verl 0.8 or later ignores the key") in problems


def test_no_line_on_the_critics_sp_where_the_algorithm_trains_none(cli: Cli, tmp_path: Path) -> None:
    text = _config("grpo", ENGINE_AT_4)
    assert _problems(_check(cli, tmp_path, text)) == []


def test_with_05_a_critic_at_another_sp_that_05_takes_is_said(cli: Cli, tmp_path: Path) -> None:
    # before: no line (only its budget judged at SP 1); SP 5, which 0.5 refuses, keeps its refusal alone. raise91:
    # counted as 0.5.0 raises its budget there, ceil(2 x 32768 / 1) = 65536 (before: one sequence, 57.2 GiB)
    text = _config("ppo", "    critic: {ulysses_sequence_parallel_size: 1}\n")
    assert _problems(_check(cli, tmp_path, text, "--trinity-version", "0.5")) == [(
        f"{SP} 1 is not the actor's SP 2: Trinity 0.5 runs the critic at SP 1, raising its token budget to hold a "
        "sequence there (0.5.0 two); the verdict and its plan count the critic's update at SP 1 (75.6 GiB per "
        "H20-96GB GPU, of 87.9 usable), its token budget raised as Trinity 0.5.0 raises it, to hold two sequences "
        "there, and the planner's plans at SP 2: set them alike (--write does)")]
    config = tmp_path / "c.yaml"
    config.write_text(text.replace("ulysses_sequence_parallel_size: 1}", "ulysses_sequence_parallel_size: 5}"))
    _, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json", "--trinity-version", "0.5")
    problems = json.loads(out)[0]["current"]["config_problems"]
    refuses = ", and Trinity 0.5 checks the critic's SP as the actor's: it refuses the config"
    assert [words for words in problems if words.startswith(SP)] == [
        f"{SP}: SP=5 does not divide 6 GPUs (the trainer's){refuses}",
        f"{SP}: SP=5 does not divide its 32 attention heads of Qwen3-8B{refuses}"]


# (2) not counted: memory.md's figures of a critic at its own SP


@pytest.mark.parametrize(("critic_sp", "tokens", "critic_pass"), [(1, 131072, 103.9), (2, 65536, 70.2)])
def test_memory_docs_figures_of_a_critic_at_its_own_sp(critic_sp: int, tokens: int, critic_pass: float) -> None:
    # Qwen3-8B at 131072 on 8 H20s at SP 4 with Env: the budget ceil(2 x 131072 / 4) = 65536; the critic's at its own
    # SP, raised to ceil(131072 / SP) where below: SP 1, 131072 tokens per GPU; SP 2, 65536 = ceil(131072 / 2), kept
    from solver.memory import breakdown, calibrated_terms, critic_pass_gib
    from solver.tables.loaders import load_memory_model
    from solver.tables.schema import Setting

    catalog, coefficients = solver.load_catalog(), load_memory_model().coefficients
    model, memory = catalog.model("Qwen3-8B"), catalog.gpu("h20").memory_gib
    counted = breakdown(model, memory, 8, Setting(env=True, sp=4), 131072, coefficients, critic="resident")
    assert (counted.tokens_per_gpu, round(counted.critic_pass_gib, 1), round(counted.usable_gib, 1)) == (
        65536, 70.2, 88.7)
    own = max(counted.tokens_per_gpu, -(-131072 // critic_sp))
    terms = calibrated_terms(model, 8, Setting(env=True, sp=critic_sp), own, coefficients)
    assert (own, round(critic_pass_gib(model, 8, own, terms, "resident"), 1)) == (tokens, critic_pass)
    assert f"{critic_pass} GiB" in MEMORY_DOC or f"{critic_pass}, as counted" in MEMORY_DOC


@pytest.mark.parametrize(("version", "critic", "trainer_off", "raising"), [
    ("0.5", "use_dynamic_bsz: false, ", False, ""), (None, "", True, ""),
    ("0.5", "", False, ", raising its token budget to hold a sequence there (0.5.0 two)"),
    ("0.6", "use_dynamic_bsz: false, ", False, ", raising its token budget to hold a sequence there"),
    (None, "use_dynamic_bsz: false, ", False,
     ", raising its token budget to hold a sequence there where its passes read it (dynamic batch sizes on)")])
def test_the_critics_sp_line_says_its_budget_raised_only_where_its_passes_read_it(
        version: str | None, critic: str, trainer_off: bool, raising: str) -> None:
    # raise91b: before, every line said "raising its token budget" though verl 0.7.0's critic with dynamic batch sizes
    # off reads none (dp_critic.py:211-218). 0.5 reads the critic's own flag; 0.6 on verl before 0.8 gives it the
    # trainer's (on here, unless trainer_off); with no release, the line hedges where one reads it and one does not
    from solver.trinity import check_trinity_config

    mapping = yaml.safe_load(_config("ppo", f"    critic: {{{critic}ulysses_sequence_parallel_size: 1}}\n"))
    mapping["trainer"]["use_dynamic_bsz"] = not trainer_off
    runs = "Trinity 0.5" if version == "0.5" else f"Trinity {'0.6 on' if version else 'with'} verl before 0.8"
    (line,) = [words for words in check_trinity_config(mapping, solver.load_catalog().model("Qwen3-8B"), 6,
                                                       version=version) if words.startswith(f"{SP} 1 is not")]
    assert f": {runs} runs the critic at SP 1{raising}; " in line
    # raise91c: where no release reads its budget, the count says one sequence there (before: "its token budget
    # raised to hold a sequence there")
    counted = ("one sequence per micro-batch there (its passes read no token budget)" if not raising else
               "its token budget raised as Trinity 0.5.0 raises it, to hold two sequences there" if version == "0.5"
               else "its token budget raised to hold a sequence there")
    assert f", {counted}, and the planner's plans at SP 2" in line
