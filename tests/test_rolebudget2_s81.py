"""Roles' budgets and the plan's cap agree (session 81, rolebudget2): three disagreements review81a and fragcheck5 found
in rolebudget's ``--write``. (1) With the trainer's 32768 and the actor's and the ref's own 16384 at SP 2,
``--token-budget default --write`` planned at 32768 but kept both roles at 16384, so the asked budget reached no role on
verl before 0.8, and the copy's own check (no ``--token-budget``) planned at 16384: a role's lower budget is now kept
only where the plan's budget is at most what the config's roles take, else raised to the plan's, saying why. (2) With
the actor's ``&a 20000``, the rollout's ``*a`` and the ref's 24576 under the trainer's 32768, the plan is capped at the
ref's 24576, which the answer named ``the config's own max_token_len_per_gpu`` (the trainer's): the cap now names the
keys that set it (`TrinityConfig.budget_in_effect_keys`); ``--write`` still lowers the trainer's to it, since Trinity
0.6 on verl 0.8 or later ignores the roles' keys and runs the trainer's, and the plan's figures are for the cap
(rolebudget2 kept the config's 32768 there; the lead took that back: a plan whose setting fits at 24576 may not at
32768). (3) A capped refusal said to raise ``the config's own max_token_len_per_gpu`` where the roles' budgets set the
cap: it names them. Each case's ``--write``, then ``--check`` and a second ``--write`` of the copy, is a fixed point."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from test_rolebudget_s81 import ACTOR, REF, WIDE
from test_tokbudget_s72 import CATALOG

from solver.api import config_query
from solver.query import TRAINER_TOKEN_BUDGET, config_token_cap_source
from solver.rules import CONFIG_TOKEN_CAP_SOURCE
from solver.trinity import ROLE_KEYS_IGNORED, read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
BASE = WIDE + "  trainer_config:\n    actor_rollout_ref:\n"
"""Qwen3-8B at 32768 tokens on 6 trainer H20s at SP 2, the trainer's budget Trinity's default, 32768."""
BOTH_16384 = BASE + ("      actor: {ppo_max_token_len_per_gpu: 16384}\n"
                     "      ref: {log_prob_max_token_len_per_gpu: 16384}\n")
"""review81a's (1): the actor's and the ref's own 16384 (the rollout's takes the actor's)."""
REF_CAPS = BASE + ("      actor: {ppo_max_token_len_per_gpu: &a 20000}\n"
                   "      rollout: {log_prob_max_token_len_per_gpu: *a}\n"
                   "      ref: {log_prob_max_token_len_per_gpu: 24576}\n")
"""review81a's (2): the ref's own 24576, the most any role takes, caps the plans."""
ACTOR_ONLY = BASE + "      actor: {ppo_max_token_len_per_gpu: 16384}\n"
"""persona59's (s80): the actor's own 16384, the ref taking the trainer's 32768."""
RAISED = ("raised to the plan's 32768, as the plan's budget is above the most the config's roles take, {}: kept, it "
          "would leave the plan's budget without effect on verl before 0.8: set by hand, it overrides "
          f"trainer.max_token_len_per_gpu for its role ({ROLE_KEYS_IGNORED})")
KEPT = ("kept, below the plan's 24576: it holds a sequence of the plan's length (ceil(32768 / 2) = 16384 tokens per "
        "GPU or more), so verl takes it, splitting that role's batch into more micro-batches of less memory, which "
        "the plan's figure bounds")


def _write(cli: Cli, tmp_path: Path, text: str, *options: str) -> tuple[str, str]:
    """``--write``'s copy of `text` (``c.yaml``, planned on H20s with `options`) and its notes, one a line, each
    ``NOTE`` and its words after the copy's name; it must succeed."""
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text)
    status, _, err = cli("--from-config", str(config), "--gpu", "h20", *options, "--write", str(written))
    assert status == 0, err
    return written.read_text(), err.replace(f"solve: note: {written}: ", "NOTE ")


def _keys(text: str) -> list[str]:
    """`text`'s lines less its comments (a copy's header differs)."""
    return [line for line in text.splitlines() if not line.lstrip().startswith("#")]


def _fixed_point(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str) -> dict[str, object]:
    """The check of ``--write``'s copy (`written`, at ``w.yaml``) as its header's command gives it: it trains and
    changes no key, and a second ``--write`` of the copy by that command's options leaves its keys as they are. The
    check's JSON answer."""
    monkeypatch.chdir(tmp_path)
    (command,) = [line.removeprefix("#   solve ") for line in written.splitlines() if line.startswith("#   solve ")]
    status, out, err = cli(*shlex.split(command), "--json")
    (answer,) = json.loads(out)
    assert status == 0 and answer["current"]["trains"] and answer["config_keys_changed"] == [], err
    options = [option for option in shlex.split(command) if option != "--check"]
    assert cli(*options, "--write", "again.yaml")[0] == 0
    assert _keys((tmp_path / "again.yaml").read_text()) == _keys(written)
    return dict(answer)


def test_an_asked_budget_above_what_the_roles_take_raises_their_own(cli: Cli, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    written, notes = _write(cli, tmp_path, BOTH_16384, "--token-budget", "default")
    assert _keys(written) == _keys(BOTH_16384.replace("16384", "32768"))
    assert notes == f"NOTE {ACTOR} 16384 {RAISED.format(16384)}\nNOTE {REF} 16384 {RAISED.format(16384)}\n"
    answer = _fixed_point(cli, tmp_path, monkeypatch, written)  # its check plans at 32768 too, uncapped
    plan = answer["plans"][0]
    assert (plan["max_token_len_per_gpu"], answer.get("token_budget_cap")) == (32768, None)


def test_without_an_asked_budget_the_trainers_is_lowered_to_the_roles_cap(cli: Cli, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    written, notes = _write(cli, tmp_path, BOTH_16384)
    # the trainer's lowered to the roles' cap, which the plan's figures are for: Trinity 0.6 on verl 0.8 or later,
    # which ignores the roles' keys, runs it (the lead, s81: keeping the config's 32768 there ran more than counted)
    assert _keys(written) == _keys(BOTH_16384.replace("  max_token_len_per_gpu: 32768",
                                                      "  max_token_len_per_gpu: 16384"))
    assert notes == (f"NOTE {TRAINER_TOKEN_BUDGET} 16384 is below Trinity's default ceil(2 x 32768 / 2) = 32768: "
                     "Trinity 0.5.0 raises it back to the default: use 0.5.1 or later\n")
    answer = _fixed_point(cli, tmp_path, monkeypatch, written)
    assert (answer["token_budget_cap"], answer["token_budget_cap_source"]) == (16384, CONFIG_TOKEN_CAP_SOURCE)


def test_the_refs_cap_is_named_and_the_trainers_lowered_to_it(cli: Cli, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    written, notes = _write(cli, tmp_path, REF_CAPS, "--trinity-version", "0.6")
    assert _keys(written) == _keys(REF_CAPS.replace("  max_token_len_per_gpu: 32768", "  max_token_len_per_gpu: 24576"))
    # no note on the rollout's (bypass90): no old log-prob recompute reads it (rollout_correction.bypass_mode unset,
    # Trinity's true), and --write leaves it as written, as the ref's of an algorithm that uses no ref
    assert notes == f"NOTE {ACTOR} 20000 {KEPT} ({ROLE_KEYS_IGNORED})\n"
    answer = _fixed_point(cli, tmp_path, monkeypatch, written)  # the copy's trainer's key caps it now
    assert (answer["token_budget_cap"], answer["token_budget_cap_source"]) == (24576, CONFIG_TOKEN_CAP_SOURCE)
    # the summary names the ref's key, and its apply block sets the trainer's as --write does
    status, out, _ = cli("--from-config", str(tmp_path / "c.yaml"), "--gpu", "h20", "--trinity-version", "0.6")
    said = " ".join(out.split())
    assert status == 0 and f"= 24576 (capped by the config's own {REF}, below Trinity's default" in said
    assert "trainer.max_token_len_per_gpu: 24576" in out


def test_trinity_05_which_reads_the_roles_own_gets_the_trainers_lowered(cli: Cli, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    written, notes = _write(cli, tmp_path, REF_CAPS, "--trinity-version", "0.5")
    assert _keys(written) == _keys(REF_CAPS.replace("  max_token_len_per_gpu: 32768", "  max_token_len_per_gpu: 24576"))
    assert f"NOTE {ACTOR} 20000 {KEPT}\n" in notes
    _fixed_point(cli, tmp_path, monkeypatch, written)


@pytest.mark.parametrize(("text", "options"), [
    (ACTOR_ONLY, ()), (ACTOR_ONLY, ("--token-budget", "default")), (REF_CAPS, ()),
    (REF_CAPS, ("--token-budget", "default")), (BOTH_16384, ("--trinity-version", "0.5"))],
    ids=["actor-only", "actor-only-default", "ref-caps", "ref-caps-default", "both-16384-05"])
def test_write_then_check_is_a_fixed_point(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str,
                                           options: tuple[str, ...]) -> None:
    written, _ = _write(cli, tmp_path, text, *options)
    _fixed_point(cli, tmp_path, monkeypatch, written)


def test_a_capped_refusal_names_the_role_key_to_raise(cli: Cli, tmp_path: Path) -> None:
    # 65536 tokens on 4 trainer H20s with the actor's own 4096 and the ref's 8192: the ref's sets the cap, which
    # trains no plan; 16384 would. Before, it said to raise "the config's own max_token_len_per_gpu", which is unset.
    # The actor's own SP 16 holds a sequence at its 4096, so no release raises it (release89b: else it would be).
    config = tmp_path / "capped.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 65536}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
                      "trainer:\n  trainer_config:\n    actor_rollout_ref:\n"
                      "      actor: {ppo_max_token_len_per_gpu: 4096, ulysses_sequence_parallel_size: 16}\n"
                      "      ref: {log_prob_max_token_len_per_gpu: 8192}\n")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20")
    said = " ".join(out.split())
    assert status == 1
    assert f"with max_token_len_per_gpu at most 8192 (the config's own {REF}):" in said
    assert (f"a cap of 16384 tokens per GPU (the config's own {REF} raised to it, or --token-budget 16384) trains "
            "65536 tokens on exactly 4 GPUs") in said


def test_the_keys_that_set_the_budget_in_effect() -> None:
    def keys(section: str) -> tuple[str, ...]:
        return read_trinity_config(BASE + section, "c.yaml", {}).budget_in_effect_keys(32768)

    assert keys("      actor: {ppo_max_token_len_per_gpu: 16384}\n") == (TRAINER_TOKEN_BUDGET,)  # the ref takes it
    assert keys("      actor: {ppo_max_token_len_per_gpu: 16384}\n"
                "      ref: {log_prob_max_token_len_per_gpu: 16384}\n") == (ACTOR, REF)
    assert keys("      rollout: {log_prob_max_token_len_per_gpu: 8192}\n") == (TRAINER_TOKEN_BUDGET,)
    assert config_token_cap_source((TRAINER_TOKEN_BUDGET,)) == CONFIG_TOKEN_CAP_SOURCE
    assert config_token_cap_source((ACTOR, REF)) == f"the config's own {ACTOR} and {REF}"


@pytest.mark.parametrize("budget", ["", "  max_token_len_per_gpu: 8192\n"])
def test_a_cap_set_by_micro_batches_of_sequences_says_so(budget: str) -> None:
    """refsp88: PPO with every pass at dynamic batch sizes off reads no token budget, the trainer's set or not; its cap
    is 1 sequence per micro-batch, which the row named "the config's own max_token_len_per_gpu" though no pass read
    it (or the config set none)."""
    config = read_trinity_config(
        "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\nbuffer: {train_batch_size: 64}\n"
        f"algorithm: {{algorithm_type: ppo}}\ntrainer:\n  use_dynamic_bsz: false\n{budget}", "c.yaml", {})
    assert (config.budget_in_effect_keys(8192), config.budget_in_effect_sequences(8192)) == ((), (1,))
    query = config_query(CATALOG, config, gpu="H100-80GB", trinity_version="0.6")
    assert (query.token_budget_cap, query.token_budget_cap_source) == (
        8192, "the config's micro-batches of 1 sequence with dynamic batch sizes off")
    assert config_token_cap_source((TRAINER_TOKEN_BUDGET,), (1, 2)) == (
        f"{CONFIG_TOKEN_CAP_SOURCE} and its micro-batches of 1, 2 sequences with dynamic batch sizes off")
