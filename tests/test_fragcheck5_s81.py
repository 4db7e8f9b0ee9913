"""Configs loaded by Trinity-RFT's own config code (session 81, fragcheck5): every ``--write`` copy of a config with
its roles' own token budgets (kept, raised, lowered, aliased) loaded in Trinity 0.5.1, 0.5.2 and 0.6.0 with each
budget as rft-solver said, but one whose budget is ``${oc.env:ACTOR_TOK,16384}``: Trinity 0.6 on verl before 0.8
builds ``trainer.trainer_config`` with ``build_dataclass_from_mapping``, which keeps the text ``'16384'``, and
``synchronize_config``'s ``_adjust_token_len_if_needed`` (``trainer/verl_legacy/verl_config.py:469``) multiplies it by
the role's SP and compares it with ``model.max_model_len``: ``TypeError: '<' not supported between instances of 'str'
and 'int'`` as the config loads. Trinity 0.5 merges the section into its typed ``veRLConfig`` first, which reads the
number (both loaded it). The rollout's budget, which Trinity does not multiply, loaded as text in 0.6.0 too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_rolebudget_s81 import WIDE

Cli = Callable[..., tuple[int, str, str]]
ARR = "trainer.trainer_config.actor_rollout_ref"
BASE = WIDE.replace("grpo", "ALGO") + "  trainer_config:\n"
REFUSED_BY_06 = ("Trinity 0.6 on verl before 0.8 keeps it as written and refuses the config as it loads it, where it "
                 "multiplies the role's token budget by its SP to compare with model.max_model_len (a TypeError; "
                 "Trinity 0.5's typed config reads the number); write the number, or ${oc.decode:...} around it")


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF", "TOK"):
        monkeypatch.delenv(name, raising=False)


def _config(section: str, key: str, value: str, algorithm: str = "grpo") -> str:
    """`BASE` with `value` (as written) at `key` of `section` under ``trainer.trainer_config`` (dotted:
    ``actor_rollout_ref.actor``)."""
    *outer, inner = section.split(".")
    lines = [f"{'  ' * (2 + depth)}{name}:\n" for depth, name in enumerate(outer)]
    return (BASE.replace("ALGO", algorithm) + "".join(lines)
            + f"{'  ' * (2 + len(outer))}{inner}:\n{'  ' * (3 + len(outer))}{key}: {value}\n")


def _problems(cli: Cli, tmp_path: Path, text: str, version: str, *options: str) -> list[tuple[str, str]]:
    """The config problems (code, words) ``--check --json`` gives `text` at Trinity `version` on H20s (with
    `options`) whose words name ``is the text``; the config must train."""
    config = tmp_path / "c.yaml"
    config.write_text(text)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", version, "--check",
                         "--json", *options)
    assert status == 0
    (answer,) = json.loads(out)
    current = answer["current"]
    return [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                 strict=True) if "is the text" in words]


@pytest.mark.parametrize(("section", "key", "value", "algorithm"), [
    ("actor_rollout_ref.actor", "ppo_max_token_len_per_gpu", "${oc.env:TOK,16384}", "grpo"),
    ("actor_rollout_ref.ref", "log_prob_max_token_len_per_gpu", "'16384'", "grpo"),
    ("actor_rollout_ref.actor", "ulysses_sequence_parallel_size", "'2'", "grpo"),
    ("actor_rollout_ref.ref", "ulysses_sequence_parallel_size", "${oc.env:TOK,2}", "grpo"),
    ("critic", "ppo_max_token_len_per_gpu", "'16384'", "ppo"),
    ("critic", "ulysses_sequence_parallel_size", "'2'", "ppo"),  # was test_interp_s64's text that says nothing
], ids=["actor-budget-oc-env", "ref-budget-quoted", "actor-sp-quoted", "ref-sp-oc-env", "critic-budget-quoted",
        "critic-sp-quoted"])
def test_a_budget_or_sp_that_trinity_06_multiplies_as_text_is_said_refused_there_not_at_05(
        cli: Cli, tmp_path: Path, section: str, key: str, value: str, algorithm: str) -> None:
    text = _config(section, key, value, algorithm)
    options = ("--critic", "offloaded") if algorithm == "ppo" else ()  # a resident critic does not fit 6 H20s
    shown = "'2'" if key.startswith("ulysses") else "'16384'"
    dotted = f"trainer.trainer_config.{section}.{key}"
    expected = [("number-as-text", f"{dotted} is the text {shown}: {REFUSED_BY_06}")]
    assert _problems(cli, tmp_path, text, "0.6", *options) == expected
    assert _problems(cli, tmp_path, text, "0.5.2", *options) == []  # its typed veRLConfig reads the number (0.5.1 too)


@pytest.mark.parametrize("text", [
    _config("actor_rollout_ref.rollout", "log_prob_max_token_len_per_gpu", "'16384'"),  # not multiplied: loaded
    _config("actor_rollout_ref.actor", "ppo_max_token_len_per_gpu", "${oc.decode:${oc.env:TOK,16384}}"),  # a number
    _config("actor_rollout_ref.actor", "ppo_max_token_len_per_gpu", "16384"),
], ids=["rollout-budget-quoted", "oc-decode", "number"])
def test_a_number_or_a_budget_trinity_does_not_multiply_is_no_text_problem(cli: Cli, tmp_path: Path,
                                                                           text: str) -> None:
    assert _problems(cli, tmp_path, text, "0.6") == []


def test_write_keeps_an_oc_env_budget_and_its_copy_is_said_refused_by_06(cli: Cli, tmp_path: Path) -> None:
    # --write keeps the user's own lower budget (it holds a sequence of the plan's length): the copy keeps the text, so
    # its check says what Trinity 0.6 on verl before 0.8 does with it, and the fix.
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(_config("actor_rollout_ref.actor", "ppo_max_token_len_per_gpu", "${oc.env:TOK,16384}"))
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", "--trinity-version", "0.6", "--write",
                         str(written))
    assert status == 0 and written.read_text().endswith("ppo_max_token_len_per_gpu: ${oc.env:TOK,16384}\n")
    assert f"{ARR}.actor.ppo_max_token_len_per_gpu 16384 kept, below the plan's 32768" in err
    assert (f"solve: warning: {written}: {ARR}.actor.ppo_max_token_len_per_gpu is the text '16384': {REFUSED_BY_06}\n"
            in err)
    assert _problems(cli, tmp_path, written.read_text(), "0.6") == [
        ("number-as-text", f"{ARR}.actor.ppo_max_token_len_per_gpu is the text '16384': {REFUSED_BY_06}")]
