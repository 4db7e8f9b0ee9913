"""Small slips this session's helpers found (session 82, smallslips41). (1) ``--write`` changed a config's length and
kept a ``model.max_response_tokens`` set alone with no word that Trinity gives prompts the rest of the length
(``_check_model_len``, ``common/config_validator.py:605-613`` in 0.6.0, ``:550-558`` in 0.5.2): a note now says the
prompt room; and one limit set alone that is not below the length, which Trinity lowers to the length less one
(leaving the other 1 token), is refused. (2) The ``for rollout``, ``unpinned``, ``other batch`` and ``more room`` lines
said ``Nx the step time`` of a ranking cost: they now say ``the relative step time``, the cost model's ratio. (3) The
critic's own token budgets were judged at the plan's SP where the config gives the critic its own (which Trinity
keeps, ``set_if_none``, and verl 0.7's critic runs at): they are judged at the critic's. (4) ``--critic none`` set the
critic's budgets to the plan's and said the plan's figure bounds them: only one below ``ceil(L/SP)`` is raised. (5)
Without a release, ``dapo`` counts no ref forward: no slip, as 0.5 has no dapo (its registry refuses it)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_criticbudget_s82 import CRITIC, FORWARD, OVERRIDES, Cli, _budgets, _critic, _fixed_point, _write

import solver
from solver.render.phrases import cost_ratio_words
from solver.trinity.keys import NO_REFERENCE_ALGORITHMS, ref_forward_runs
from solver.trinity.reader import OneLimit, limit_at_length_words, one_limit, prompt_room_words

RESPONSE_ALONE = """\
model:
  model_path: Qwen/Qwen3-8B
  max_response_tokens: 30000
  max_model_len: 32768
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
trainer: {trainer_type: verl}
"""
"""A config of Qwen3-8B setting ``max_response_tokens`` alone, at 32768 tokens, 6 trainer GPUs of 8."""


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def _notes(err: str) -> list[str]:
    """The notes on stderr, less the Env one."""
    return [line for line in err.splitlines() if line.startswith("solve: note:") and "needs Env" not in line]


# (1) a response limit set alone


def test_a_changed_length_keeps_the_response_limit_and_says_the_prompt_room(cli: Cli, tmp_path: Path) -> None:
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(RESPONSE_ALONE)
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--maximize", "len", "--write", str(written))
    assert status == 0, err
    model = yaml.safe_load(written.read_text())["model"]
    assert (model["max_model_len"], model["max_response_tokens"], "max_prompt_tokens" in model) == (39936, 30000,
                                                                                                    False)
    # before: no word of it
    assert f"solve: note: {written}: model.max_response_tokens 30000 kept, and model.max_prompt_tokens is unset: " \
           "Trinity gives prompts the rest of model.max_model_len 39936, max_prompt_tokens = 39936 - 30000 = 9936, " \
           "and the rollout stops each response at 30000 tokens; raise max_response_tokens for longer responses" \
           in _notes(err)


def test_a_kept_length_says_nothing_of_the_prompt_room(cli: Cli, tmp_path: Path) -> None:
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(RESPONSE_ALONE)
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--len", "32768", "--write", str(written))
    assert status == 0 and yaml.safe_load(written.read_text())["model"]["max_model_len"] == 32768, err
    assert not any("max_response_tokens" in line for line in _notes(err))


def test_a_response_limit_not_below_the_plans_length_is_refused(cli: Cli, tmp_path: Path) -> None:
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(RESPONSE_ALONE)
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--len", "16384", "--write", str(written))
    # before: written, and Trinity lowered the limit to 16383, truncating every prompt to 1 token
    assert (status, out, err) == (2, "", (
        f"solve: error: --write {written}: model.max_response_tokens 30000 is not below model.max_model_len 16384, "
        "and model.max_prompt_tokens is unset: Trinity lowers it to 16383 and leaves max_prompt_tokens 1 token, to "
        "which every prompt is truncated (model.enable_prompt_truncation, on by default); lower it in "
        f"{config} below 16384\n"))
    assert not written.exists()


def test_one_limit_alone_as_trinity_fills_the_other() -> None:
    def limit(**keys: int) -> OneLimit | None:
        return one_limit({"model": keys}, "c.yaml", {})

    assert limit(max_response_tokens=30000, max_model_len=131072) == OneLimit("max_response_tokens", 30000, 131072)
    assert limit(max_prompt_tokens=2048, max_response_tokens=30000, max_model_len=131072) is None  # both: the sum's
    assert limit(max_model_len=131072) is None and limit(max_response_tokens=30000) is None
    prompt = OneLimit("max_prompt_tokens", 32768, 32768)
    assert (prompt.other, prompt.kept) == ("max_response_tokens", 32767)
    assert limit_at_length_words(prompt) == (
        "model.max_prompt_tokens 32768 is not below model.max_model_len 32768, and model.max_response_tokens is "
        "unset: Trinity lowers it to 32767 and leaves max_response_tokens 1 token, at which the rollout stops every "
        "response")
    # a prompt limit alone leaves responses the rest, which the plan's length is for: no note
    assert prompt_room_words(OneLimit("max_prompt_tokens", 2048, 32768)) is None
    assert limit_at_length_words(OneLimit("max_response_tokens", 32767, 32768)) is None


# (2) the cost model's ratio


def test_the_cost_lines_say_the_relative_step_time(cli: Cli) -> None:
    status, out, _ = cli("--model", "0.6B", "--gpu", "a100", "--gpus", "2", "--len", "8k")
    assert status == 0 and ("--total-gpus 2 --rollout-gpus 1 keeps 1 of the 2 for it: vanilla on 1 trainer GPU, 8192 "
                            "tokens, 2.00x the relative step time (documented)") in " ".join(out.split())
    status, out, _ = cli("--model", "8B", "--gpu", "a100", "--len", "32k", "--sp", "4")
    assert status == 0 and ("without --sp 4, the best plan is Env + SP=2 on 6 GPUs, cost 0.1852 (documented): the "
                            "pin costs 1.76x the relative step time") in " ".join(out.split())
    assert "x the step time" not in out
    [answer] = solver.plan("8B", gpu="a100", max_model_len=32768, sp=4)
    assert answer.best is not None and answer.unpinned is not None
    assert cost_ratio_words(answer.best, answer.unpinned) == "1.76x the relative step time"


# (3) the critic's own SP, kept by --write where the critic is another model (a critic of the plan's model gets the
# plan's SP: tests/test_review82a_s82.py)


def _another_critic_at_sp_1(text: str) -> str:
    """`text` with a critic of another model (``model.critic_model_path``) at its own SP 1."""
    assert "max_model_len: 32768}" in text and "    critic:\n" in text
    return text.replace("max_model_len: 32768}", "max_model_len: 32768, critic_model_path: /models/critic}").replace(
        "    critic:\n", "    critic:\n      ulysses_sequence_parallel_size: 1\n")


KEPT_SP = ("solve: warning: {written}: trainer.trainer_config.critic.ulysses_sequence_parallel_size 1 is not "
           "trainer.ulysses_sequence_parallel_size 2: Trinity with verl before 0.8 runs the critic at SP 1, raising "
           "its token budget to hold a sequence there; Trinity 0.6 on verl 0.8 or later ignores the key and runs the "
           "critic at SP 2; the verdict and its plan count the critic's update at the one of SP 1 and SP 2 that needs "
           "the most, its token budget raised to hold a sequence there, and the planner's plans at SP 2: --write "
           "keeps it: the critic is model.critic_model_path's, whose heads rft-solver does not know\n")
"""The copy's line on the critic's own SP 1, which ``--write`` keeps (session 83, criticsp: before, none)."""


def test_the_critics_budgets_are_judged_at_its_own_sp(cli: Cli, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # the plan's SP 2, the critic's own 1: ceil(32768 / 1) = 32768 holds a sequence there, not 20000 (before: kept,
    # judged at SP 2, where ceil(32768 / 2) = 16384 does)
    text = _another_critic_at_sp_1(_critic(ppo="20000", forward="40000"))
    written, notes = _write(cli, tmp_path, text)
    assert yaml.safe_load(written)["trainer"]["trainer_config"]["critic"]["ulysses_sequence_parallel_size"] == 1
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 32768, "forward_max_token_len_per_gpu": 32768}
    assert notes == KEPT_SP.format(written=tmp_path / "w.yaml") + (
        f"NOTE {CRITIC} 20000 raised to the plan's 32768, as below ceil(32768 / 1) = 32768 it holds no "
        f"sequence of the plan's length at the critic's own SP 1: {OVERRIDES}\n"
        f"NOTE {FORWARD} 40000 lowered to the plan's 32768: {OVERRIDES}\n")
    _fixed_point(cli, tmp_path, monkeypatch, written)


def test_a_critic_at_its_own_lower_sp_gets_the_least_above_the_plans_budget(cli: Cli, tmp_path: Path) -> None:
    # --token-budget 16384 plans at SP 2, where 16384 holds a sequence; the critic, at its own SP 1, needs 32768
    text = _another_critic_at_sp_1(_critic(ppo="20000", forward="40000"))
    written, notes = _write(cli, tmp_path, text, "--token-budget", "16384")
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 32768, "forward_max_token_len_per_gpu": 32768}
    scope = OVERRIDES.split("role ", 1)[1]
    least = ("ceil(32768 / 1) = 32768, the least that holds a sequence of the plan's length at the critic's own SP 1: "
             f"the plan's 16384 holds none there, so the critic takes more tokens per GPU than the plan counts {scope}")
    assert notes.startswith(KEPT_SP.format(written=tmp_path / "w.yaml")
                            + f"NOTE {CRITIC} 20000 raised to {least}\nNOTE {FORWARD} 40000 lowered to {least}\n")


# (4) a critic the plan leaves out


def test_critic_none_raises_only_a_critic_budget_that_holds_no_sequence(cli: Cli, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    text = _critic(ppo="65536", forward="8192")
    written, notes = _write(cli, tmp_path, text, "--critic", "none")
    # before: 32768 and 32768, the first noted as lowered to the plan's, which counts no critic
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 65536, "forward_max_token_len_per_gpu": 16384}
    scope = OVERRIDES.split("role ", 1)[1]
    assert notes == (f"NOTE {FORWARD} 8192 raised to ceil(32768 / 2) = 16384, the least that holds a sequence of the "
                     "plan's length, below which verl stops: the plan counts no critic (--critic none), so --write "
                     f"sets no more of its budgets {scope}\n")
    _fixed_point(cli, tmp_path, monkeypatch, written)


def test_critic_none_keeps_a_critic_budget_that_holds_a_sequence_without_a_note(cli: Cli, tmp_path: Path) -> None:
    # before: kept, noted "which the plan's figure bounds", where the plan counts no critic
    written, notes = _write(cli, tmp_path, _critic(ppo="20000"), "--critic", "none")
    assert _budgets(written) == {"ppo_max_token_len_per_gpu": 20000}
    assert "critic" not in notes


# (5) dapo without a release


def test_without_a_release_dapo_runs_no_ref_forward_as_no_release_runs_one() -> None:
    # 0.6 adds cpt and dapo to the algorithms without a ref; 0.5.0's and 0.5.2's registry has neither (a config
    # naming one is refused as it loads), so 0.6's list is exact without a release
    assert set(NO_REFERENCE_ALGORITHMS["0.6"]) - set(NO_REFERENCE_ALGORITHMS["0.5"]) == {"cpt", "dapo"}
    assert not ref_forward_runs("dapo", None) and not ref_forward_runs("cpt", None)
    assert ref_forward_runs("grpo", None) and ref_forward_runs(None, None)
