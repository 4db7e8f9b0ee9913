"""Review and mutation tests of session 53's Trinity 0.5 budget change (`TrinityConfig.trainer_sp`,
`default_budget`, the filled trainer budget judged as a hand-set one, the ref's own budget at the ref's SP): each test
pins a fix or kills a mutant the other tests let live (review-s53-reviewc.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from solver.tables import load_catalog
from solver.trinity import load_config_mapping, read_trinity_config, trinity_config_problems

ACTOR_BUDGET = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
REF_BUDGET = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
ROLLOUT_BUDGET = "trainer.trainer_config.actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu"
QWEN3_8B = load_catalog().model("Qwen3-8B")


def _keys(values: dict[str, int], budget: str) -> dict[str, int]:
    """`values` under their keys: ``sp`` as ``ulysses_sequence_parallel_size``, ``budget`` as `budget`."""
    return {{"sp": "ulysses_sequence_parallel_size", "budget": budget}[key]: value for key, value in values.items()}


def _config(trainer: dict[str, int], actor: dict[str, int], ref: dict[str, int] | None = None,
            rollout: dict[str, int] | None = None) -> str:
    """A GRPO config for Qwen3-8B at 32768 tokens, 4 of 8 GPUs training, with these keys under the trainer and its
    roles (``sp`` for ``ulysses_sequence_parallel_size``, ``budget`` for the token budget); with the rollout's keys,
    ``rollout_correction.bypass_mode`` false, so that the actor's log-prob recompute that reads them runs."""
    roles = {"actor": _keys(actor, "ppo_max_token_len_per_gpu"),
             "ref": _keys(ref or {}, "log_prob_max_token_len_per_gpu"),
             "rollout": _keys(rollout or {}, "log_prob_max_token_len_per_gpu")}
    recompute = {"algorithm": {"rollout_correction": {"bypass_mode": False}}} if rollout else {}
    return yaml.safe_dump({
        "algorithm": {"algorithm_type": "grpo"}, "model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768},
        "cluster": {"node_num": 1, "gpu_per_node": 8}, "explorer": {"rollout_model": {"engine_num": 4}},
        "trainer": {**_keys(trainer, "max_token_len_per_gpu"),
                    "trainer_config": {"actor_rollout_ref": roles, **recompute}}})


def _current(cli: Callable[..., tuple[int, str, str]], tmp_path: Path, text: str,
             *options: str) -> tuple[int, bool, int | None, list[tuple[str, str]]]:
    """The verdict on the config `text` with A100s and `options`: its SP, whether it trains, the budget it is at, and
    the lines other than those on the ref's SP (role-sp-differs, ref-sp-ungrouped-refused: code, words)."""
    path = tmp_path / "trinity.yaml"
    path.write_text(text, encoding="utf-8")
    status, out, err = cli("--from-config", str(path), "--gpu", "a100", "--json", *options)
    assert status == 0, err
    current = json.loads(out)[0]["current"]
    lines = [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"],
                                                  strict=True)
             if code not in ("role-sp-differs", "ref-sp-ungrouped-refused")]
    return current["sp"], current["trains"], current["max_token_len_per_gpu"], lines


RAISED = ("Trinity 0.5.0 raises it to 65536, the verdict's budget (any budget below twice the length over its "
          "role's SP), as the verdict counts; 0.5.1 and 0.5.2 keep it, fewer tokens per GPU than the verdict assumes "
          "(so it is cautious; each step takes more micro-batches)")
"""How a budget line says 0.5.0's raise of a budget at 32768 tokens and SP 1 that holds a sequence (raise05)."""

def test_05_trainer_budget_set_to_the_fill_is_judged_as_set_by_hand(cli, tmp_path: Path):
    # Actor SP 4, trainer SP 1, trainer.max_token_len_per_gpu 65536 (what Trinity 0.5 fills it with at SP 1): at the
    # config's own length it is the budget in effect, as set by hand, not a default the verdict reads as unset (it
    # was: "what Trinity gives it unset at the config's own 32768 tokens, so read as unset at 32768 tokens too").
    text = _config({"budget": 65536}, {"sp": 4})
    # (s87: a budget above the verdict's leaves it unvouched: trains false, --check fails.)
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5") == (4, False, None, [(
        "token-budget-above-verdict",
        ("trainer.max_token_len_per_gpu 65536 is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables "
         "measured: more tokens per GPU than the verdict assumes"))])
    # At another length it follows the fill, as the unset key would (at SP 1: ceil(2 x 16384 / 1) = 32768).
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5", "--len", "16384") == (4, False, None, [(
        "token-budget-above-verdict",
        ("trainer.max_token_len_per_gpu 65536: what Trinity gives it unset at the config's own 32768 tokens, so read "
         "as unset at 16384 tokens too (the verdict is at 8192 tokens per GPU); as written, Trinity keeps 65536 there, "
         "more tokens per GPU than the verdict assumes; applying the plan leaves it at its budget"))])
    # With 0.6 (or no release) the trainer's SP 1 is the verdict's and 65536 its default: no budget line.
    for options in (("--trinity-version", "0.6"), ()):
        assert _current(cli, tmp_path, text, *options) == (1, False, None, [])


def test_05_fill_that_neither_the_actor_nor_the_ref_takes_is_not_said(cli, tmp_path: Path):
    # Both set their own budgets (the rollout takes the actor's): the fill at the trainer's SP 1 reaches no role.
    text = _config({}, {"sp": 4, "budget": 16384}, {"sp": 4, "budget": 16384})
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5") == (4, True, None, [])
    # The ref setting none takes it (at the trainer's SP 1, Trinity 0.5's for a ref that sets none): said.
    text = _config({}, {"sp": 4, "budget": 16384})
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5") == (4, False, None, [(
        "token-budget-above-verdict",
        ("the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 1 with ceil(2 x 32768 / "
         "1) = 65536, is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables measured: more tokens "
         "per GPU than the verdict assumes"))])
    # The actor setting none takes it: said too.
    text = _config({}, {"sp": 4}, {"sp": 4, "budget": 16384})
    assert [code for code, _ in _current(cli, tmp_path, text, "--trinity-version", "0.5")[3]] == [
        "token-budget-above-verdict"]


def test_05_raise_of_a_fill_holding_no_sequence_is_said_only_where_the_actor_takes_it(cli, tmp_path: Path):
    # Trainer SP 4 fills 16384, which holds no 32768-token sequence at the actor's SP 1. With the actor's own 40000,
    # the actor takes that and no raise of the fill is said; 0.5.0 raises the 40000 to its default, 65536, which the
    # verdict counts (raise05: it was at 40000, which 0.5.1 and 0.5.2 keep).
    text = _config({"sp": 4}, {"sp": 1, "budget": 40000})
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5") == (1, False, None, [(
        "token-budget-below-verdict",
        ("trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu 40000 is below Trinity's default "
         f"ceil(2 x 32768 / 1) = 65536, which the tables measured: {RAISED}"))])
    # With the rollout's own 40000 the actor still takes the fill, which holds no sequence: Trinity 0.5 raises it
    # (0.5.0 to its default 65536, above the rollout's), so the verdict is at the default and the raise is said, then
    # (s58) that 0.5.1's verl still stops at a batch padded wider than the raised budget.
    text = _config({"sp": 4}, {"sp": 1}, rollout={"budget": 40000})
    current = _current(cli, tmp_path, text, "--trinity-version", "0.5")
    assert (current[2], [code for code, _ in current[3]]) == (
        None, ["token-budget-below-verdict"] * 2 + ["token-budget-below-length"])


def test_05_lowered_fill_beside_a_roles_own_budget(cli, tmp_path: Path):
    # Trainer SP 2 fills 32768 (holds a sequence at the actor's SP 1); the actor's own 40000 is the most any role
    # takes, which 0.5.0 raises to its default, 65536, the verdict's (raise05); the fill the ref takes at its SP 2
    # holds twice the length there, so no release raises it: below the verdict's.
    text = _config({"sp": 2}, {"sp": 1, "budget": 40000})
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5") == (1, False, None, [
        ("token-budget-below-verdict",
         ("the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 2 with ceil(2 x 32768 "
          "/ 2) = 32768, is below Trinity's default ceil(2 x 32768 / 1) = 65536, which the tables measured: fewer "
          "tokens per GPU than the verdict assumes (so it is cautious; each step takes more micro-batches)")),
        ("token-budget-below-verdict",
         ("trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu 40000 is below Trinity's default "
          f"ceil(2 x 32768 / 1) = 65536, which the tables measured: {RAISED}"))])


def test_05_fill_at_the_verdicts_length_not_the_configs(cli, tmp_path: Path):
    # --len 16384: the unset budget is filled at that length, ceil(2 x 16384 / 1) = 32768 at the trainer's SP 1.
    text = _config({}, {"sp": 4})
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5", "--len", "16384")[3] == [(
        "token-budget-above-verdict",
        ("the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 1 with ceil(2 x 16384 / "
         "1) = 32768, is above Trinity's default ceil(2 x 16384 / 4) = 8192, which the tables measured: more tokens "
         "per GPU than the verdict assumes"))]


@pytest.mark.parametrize(("trainer", "actor", "version", "expected"), [
    ({}, {"sp": 4}, "0.5", (4, 1, 65536)),
    ({"sp": 4}, {"sp": 1}, "0.5", (1, 4, 16384)),
    ({"sp": 2}, {}, "0.5", (2, None, 32768)),  # the actor sets none: Trinity 0.5 runs at the trainer's
    ({"sp": 2}, {"sp": 2}, "0.5", (2, None, 32768)),
    ({}, {"sp": 4}, "0.6", (1, None, 65536)),
    ({}, {"sp": 4}, None, (1, None, 65536)),
])
def test_trainer_sp_is_carried_only_where_05_runs_at_another(trainer, actor, version, expected):
    config = read_trinity_config(_config(trainer, actor), "t.yaml", {}, version)
    assert (config.sp, config.trainer_sp, config.default_budget(32768)) == expected


def test_followed_and_in_effect_budgets_at_the_trainers_sp():
    # Actor SP 4, trainer SP 1: the trainer's budget written out at 65536 follows the fill; at 16384 it is the
    # user's own (a limit at any length), though 16384 is the default at the actor's SP.
    written, own = (read_trinity_config(_config({"budget": budget}, {"sp": 4}), "t.yaml", {}, "0.5")
                    for budget in (65536, 16384))
    assert (written.followed_budgets(), written.budget_in_effect(65536)) == (("trainer.max_token_len_per_gpu",), 131072)
    # budget90: the ref takes it at the trainer's SP 1, where it holds no 65536-token sequence: 0.5.0 raises it there
    # to ceil(2 x 65536 / 1), the most any 0.5 release gives (the actor's 16384 x 4 holds one)
    assert (own.followed_budgets(), own.budget_in_effect(65536)) == ((), 131072)
    # raise05: the actor's 16384 x 4 holds one sequence, not two: 0.5.0 raises it to ceil(2 x 65536 / 4)
    assert own.model_copy(update={"ref_forward_runs": False}).budget_in_effect(65536) == 32768
    # A ref's budget at the fill follows it too; the rollout's at the actor's own does.
    roles = read_trinity_config(_config({}, {"sp": 4, "budget": 20000}, {"budget": 65536}, {"budget": 20000}),
                                "t.yaml", {}, "0.5")
    assert roles.followed_budgets() == (REF_BUDGET, ROLLOUT_BUDGET)
    assert roles.budget_in_effect(16384) == 32768


@pytest.mark.parametrize(("trainer", "actor", "ref", "version", "expected"), [
    # The ref sets no SP: Trinity 0.5 gives it the trainer's 1, at which 16384 holds no 32768-token sequence.
    ({"sp": 1}, {"sp": 4}, {"budget": 16384}, "0.5",
     [f"{REF_BUDGET} 16384 x SP 1 (the ref's) is below model.max_model_len 32768"]),
    # The ref's own SP 4, the actor's: checked at it, where 16384 holds one.
    ({}, {"sp": 4}, {"sp": 4, "budget": 16384}, "0.5", []),
    # The ref's own SP 2 beside the actor's 1: 16384 x 2 holds 32768; the actor's SP would not.
    ({"sp": 2}, {"sp": 1}, {"sp": 2, "budget": 16384}, "0.5", []),
    # 0.6 on verl before 0.8 takes the ref's own SP 1 over the trainer's 4 and raises its budget there (s84:
    # verl_legacy/verl_config.py:577, :586 in 0.6.0, as 0.5.2): 16384 x 1 holds no sequence (verl 0.8 ignores the key).
    ({"sp": 4}, {"sp": 4}, {"sp": 1, "budget": 16384}, "0.6",
     [f"{REF_BUDGET} 16384 x SP 1 (the ref's) is below model.max_model_len 32768"]),
    # The actor's budget stays at the actor's SP under 0.5, not the ref's 1: 10000 x 4 holds 32768, 4096 x 4 does not.
    ({"sp": 1}, {"sp": 4, "budget": 10000}, {}, "0.5", []),
    # The ref at the actor's SP 4 (the trainer's, which it takes): said without "(the ref's)"; likewise with 0.6.
    ({"sp": 4}, {"sp": 4}, {"budget": 4096}, "0.5", [f"{REF_BUDGET} 4096 x SP 4 is below model.max_model_len 32768"]),
    ({"sp": 4}, {}, {"budget": 4096}, "0.6", [f"{REF_BUDGET} 4096 x SP 4 is below model.max_model_len 32768"]),
    ({"sp": 1}, {"sp": 4, "budget": 4096}, {}, "0.5",
     [f"{ACTOR_BUDGET} 4096 x SP 4 is below model.max_model_len 32768"]),
])
def test_the_refs_own_budget_is_checked_at_the_refs_sp_under_05(trainer, actor, ref, version, expected):
    mapping = load_config_mapping(_config(trainer, actor, ref), "t.yaml")
    problems = trinity_config_problems(mapping, QWEN3_8B, 4, version=version)
    # The lines on each budget below the length (s58: not the line after each, on 0.5.1's padded width).
    said = [problem.words.split(":", 1)[0] for problem in problems
            if problem.code == "token-budget-below-length" and " is below " in problem.words]
    assert said == expected


def test_a_trainer_budget_at_the_default_beside_lowered_roles_stays_a_followed_one_without_05(cli, tmp_path: Path):
    # Trainer SP 1 at its default 65536, the actor's and the ref's own 40000 (the verdict is at 40000): with 0.6 or no
    # release the trainer's key is the default written out, as before the 0.5 fill was judged (only a 0.5 fill at
    # another SP than the verdict's is judged as set by hand at the config's own length).
    text = _config({"budget": 65536}, {"budget": 40000}, {"budget": 40000})
    for options in (("--trinity-version", "0.6"), ()):
        sp, trains, budget, lines = _current(cli, tmp_path, text, *options)
        assert (sp, trains, budget, lines[1]) == (1, False, 40000, (
            "token-budget-above-verdict",
            ("trainer.max_token_len_per_gpu 65536: what Trinity gives it unset at the config's own 32768 tokens, so "
             "read as unset at 32768 tokens too (the verdict is at 40000 tokens per GPU); as written, Trinity keeps "
             "65536 there, more tokens per GPU than the verdict assumes (Trinity 0.6 on verl 0.8 or later runs every "
             "pass at it; verl before 0.8 each role without a budget of its own); applying the plan leaves it at its "
             "budget")))


def test_05_a_roles_own_budget_beside_the_fill_is_named_by_its_key(cli, tmp_path: Path):
    # Actor SP 4, trainer SP 1: the actor takes the fill, 65536; the ref's own 20000 is above the verdict's 16384 too.
    text = _config({}, {"sp": 4}, {"sp": 4, "budget": 20000})
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5")[3] == [
        ("token-budget-above-verdict",
         ("the unset trainer.max_token_len_per_gpu, which Trinity 0.5 fills at the trainer's SP 1 with ceil(2 x 32768 "
          "/ 1) = 65536, is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables measured: more "
          "tokens per GPU than the verdict assumes")),
        ("token-budget-above-verdict",
         (f"{REF_BUDGET} 20000 is above Trinity's default ceil(2 x 32768 / 4) = 16384, which the tables measured: "
          "more tokens per GPU than the verdict assumes"))]  # Trinity 0.5's verl reads the roles' own: no word of 0.6


def test_followed_keys_at_different_budgets_get_a_line_each(cli, tmp_path: Path):
    # Session 55: the followed keys' line named them all at the first one's budget. Trinity 0.5, trainer SP 4 at its
    # fill 16384 and the actor's SP 1 at 65536 (0.5's raise of that 16384, which holds no 32768-token sequence at SP
    # 1): both write out what Trinity gives them unset. At --len 16384 the trainer's is below the verdict's 32768 and
    # the actor's above it (it was: "trainer... and actor... 16384 ... fewer tokens per GPU").
    text = _config({"sp": 4, "budget": 16384}, {"sp": 1, "budget": 65536}, {"sp": 1})
    assert _current(cli, tmp_path, text, "--trinity-version", "0.5", "--len", "16384") == (1, False, None, [
        ("token-budget-below-verdict",
         ("trainer.max_token_len_per_gpu 16384: what Trinity gives it unset at the config's own 32768 tokens, so read "
          "as unset at 16384 tokens too (the verdict is at 32768 tokens per GPU); as written, Trinity keeps 16384 "
          "there, fewer tokens per GPU than the verdict assumes; applying the plan leaves it at its budget")),
        ("token-budget-above-verdict",
         (f"{ACTOR_BUDGET} 65536: what Trinity gives it unset at the config's own 32768 tokens, so read as unset at "
          "16384 tokens too (the verdict is at 32768 tokens per GPU); as written, Trinity keeps 65536 there, more "
          "tokens per GPU than the verdict assumes; applying the plan leaves it at its budget"))])
    # Any release: the trainer's at its default 65536 and the rollout's at the actor's own 49152 (the rollout takes
    # the actor's): at --len 16384 one line says 65536 (the trainer's), another 49152 (the rollout's, a role's key).
    text = _config({"budget": 65536}, {"budget": 49152}, rollout={"budget": 49152})
    followed = [words.split(":", 1)[0] for code, words in _current(cli, tmp_path, text, "--len", "16384")[3]
                if "what Trinity gives" in words]
    assert followed == ["trainer.max_token_len_per_gpu 65536", f"{ROLLOUT_BUDGET} 49152"]
    # checks90: with bypass_mode unset (Trinity's default, true) no pass reads the rollout's key: no line on it
    text = text.replace("bypass_mode: false", "bypass_mode: true")
    assert [words.split(":", 1)[0] for code, words in _current(cli, tmp_path, text, "--len", "16384")[3]
            if "what Trinity gives" in words] == ["trainer.max_token_len_per_gpu 65536"]


def test_a_followed_trainer_budget_under_05_names_no_verl_08_scope(cli, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch):
    # mutants48: the followed trainer budget's line names what each verl line runs at it (on 0.6 or no release);
    # Trinity 0.5 runs verl before 0.8 alone, so its line says no word of verl 0.8
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    path = tmp_path / "trinity.yaml"
    path.write_text("algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-8B, max_model_len: 32768}\n"
                    "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
                    "trainer: {ulysses_sequence_parallel_size: 4, max_token_len_per_gpu: 16384}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(path), "--gpu", "a100", "--len", "40960", "--trinity-version", "0.5")
    assert status == 0 and ("but: trainer.max_token_len_per_gpu 16384: what Trinity gives it unset at the config's "
                            "own 32768 tokens, so read as unset at 40960 tokens too (the verdict is at 20480 tokens "
                            "per GPU); as written, Trinity keeps 16384 there, fewer tokens per GPU than the verdict "
                            "assumes; applying the plan leaves it at its budget") in " ".join(out.split())
