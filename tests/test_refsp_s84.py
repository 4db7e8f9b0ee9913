"""The SP at which Trinity runs the actor and the ref, and raises their token budgets, where a config gives them their
own (s84, refsp).

Read from the released code: Trinity 0.6.0 on verl before 0.8 (``trainer/verl_legacy/verl_config.py``) fills each
role's SP and budget from the trainer's only where unset (``set_if_none``, ``:554`` for the actor, ``:577`` for the
ref), then raises each role's budget at that role's own SP (``_adjust_token_len_if_needed`` reads ``obj``'s SP at
``:484``; called for the actor at ``:563``, for the ref at ``:586``), as 0.5.2 does (``trainer/verl/verl_config.py:546``,
``:569``, ``:555``, ``:578``); verl 0.7.1 fills each micro-batch with the role's budget x its own SP
(``workers/actor/dp_actor.py:72``, ``:467``). Trinity 0.6.0 on verl 0.8 or later freezes both to the trainer's
(``FROZEN_KEYS``, ``trainer/verl/config.py:711-724``). Tests that said 0.6 runs the ref at the trainer's SP were wrong.
"""

from __future__ import annotations

import pytest

from solver.query import ConfigProblemCode
from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

ACTOR = "trainer.trainer_config.actor_rollout_ref.actor"
REF = "trainer.trainer_config.actor_rollout_ref.ref"


def _budget_lines(trainer: dict[str, int], actor: dict[str, int], ref: dict[str, int],
                  version: str | None) -> list[str]:
    """The ``token-budget-below-length`` lines for a GRPO config of Qwen3-8B at 65536 tokens on 16 trainer GPUs."""
    mapping = {"algorithm": {"algorithm_type": "grpo"},
               "model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 65536},
               "trainer": {**trainer, "trainer_config": {"actor_rollout_ref": {"actor": actor, "ref": ref}}}}
    problems = trinity_config_problems(mapping, load_catalog().model("8B"), 16, version=version)  # type: ignore[arg-type]
    return [problem.words for problem in problems if problem.code is ConfigProblemCode.TOKEN_BUDGET_BELOW_LENGTH]


@pytest.mark.parametrize("version", ["0.6", None])
def test_the_refs_own_budget_is_judged_at_the_refs_own_sp(version: str | None) -> None:
    """The user's config: actor and ref each at their own SP 8 with their own 16384, the trainer's SP unset (1).
    ``verl_legacy/verl_config.py:586`` raises the ref's budget at the ref's SP 8 (set at ``:577``), where 16384 x 8
    holds 65536 tokens: no line (it said ``x SP 1 ... raises it to 65536``)."""
    own = {"ulysses_sequence_parallel_size": 8}
    assert _budget_lines({}, {**own, "ppo_max_token_len_per_gpu": 16384},
                         {**own, "log_prob_max_token_len_per_gpu": 16384}, version) == []
    # at the ref's own SP 2 the same budget holds 32768 tokens: said at that SP, the ref's, with 0.6's words
    (line, *_) = _budget_lines({}, {}, {"ulysses_sequence_parallel_size": 2, "log_prob_max_token_len_per_gpu": 16384},
                               version)
    assert line.startswith(f"{REF}.log_prob_max_token_len_per_gpu 16384 x SP 2 (the ref's) is below "
                           "model.max_model_len 65536: ")
    if version == "0.6":
        assert line.endswith("Trinity 0.6 on verl before 0.8 raises it to ceil(65536 / 2) = 32768, and on verl 0.8 "
                             "or later ignores the key")


def test_the_trainers_budget_is_judged_at_the_sp_of_the_roles_that_take_it() -> None:
    """``trainer.max_token_len_per_gpu 4096`` with the actor and the ref at their own SP 8, setting no budget: verl
    before 0.8 gives it to both at SP 8 and raises it there (to 8192), not at the trainer's SP 1, where only verl 0.8
    or later reads it; with the ref at the trainer's SP it is raised there too, for the ref."""
    trainer, own = {"max_token_len_per_gpu": 4096}, {"ulysses_sequence_parallel_size": 8}
    assert _budget_lines(trainer, own, own, "0.6") == [
        ("trainer.max_token_len_per_gpu 4096 x SP 1 is below model.max_model_len 65536: verl 0.8 or later stops at the "
         "first sequence longer than that; on verl before 0.8 each role that takes it runs at an SP of its own"),
        ("trainer.max_token_len_per_gpu 4096 x SP 8 (the actor's and the ref's, which set no budget of their own) is "
         "below model.max_model_len 65536: Trinity 0.6 on verl before 0.8 raises the actor's and the ref's to "
         "ceil(65536 / 8) = 8192")]
    assert _budget_lines(trainer, own, {}, "0.6") == [
        ("trainer.max_token_len_per_gpu 4096 x SP 1 is below model.max_model_len 65536: verl 0.8 or later stops at the "
         "first sequence longer than that, and Trinity 0.6 on verl before 0.8 raises it to ceil(65536 / 1) = 65536"),
        ("trainer.max_token_len_per_gpu 4096 x SP 8 (the actor's, which sets no budget of its own) is below "
         "model.max_model_len 65536: Trinity 0.6 on verl before 0.8 raises the actor's to ceil(65536 / 8) = 8192")]


def test_05_judges_the_trainers_budget_at_its_sp_only_where_a_role_takes_it_there() -> None:
    """Trinity 0.5 (verl 0.7 alone) runs the trainer at the actor's SP 4, whose own budget holds the length; the ref at
    its own SP 2 takes the trainer's 4096: raised at SP 2 (``trainer/verl/verl_config.py:578`` in 0.5.2), not at 4."""
    lines = _budget_lines({"max_token_len_per_gpu": 4096},
                          {"ulysses_sequence_parallel_size": 4, "ppo_max_token_len_per_gpu": 16384},
                          {"ulysses_sequence_parallel_size": 2}, "0.5")
    assert [line.split(":", 1)[0] for line in lines] == [
        ("trainer.max_token_len_per_gpu 4096 x SP 2 (the ref's, which sets no budget of its own) is below "
         "model.max_model_len 65536"),
        ("trainer.max_token_len_per_gpu (the ref's, which sets no budget of its own) as Trinity 0.5.1 raises it, 32768 "
         "x SP 2 = 65536 tokens, holds every sequence, but its verl stops at the first step whose batch is padded "
         "wider, to its longest prompt plus its longest response, which may come from two sequences (a multi-turn "
         "workflow, model.enable_prompt_truncation off, or a rollout max_tokens above max_response_tokens)")]
