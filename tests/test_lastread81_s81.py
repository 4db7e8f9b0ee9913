"""A last read of session 81's whole change (helper lastread81): where a token budget cap came from is worded by one
helper (`solver.query.token_cap_source`), which a plan's ``capped by`` words, a query's limits, ``--explain``'s
``token_cap`` reason and a capped refusal's raised cap all take, so the four name the same source alike; and a role's
own token budget that repeats the one it is filled from (`solver.trinity.plan_keys.own_budget_change`) is found by one
rule, for the value ``--write`` gives it and for the note that says why; and whether ``all`` names every job of a
fleet (no job named so) is one property, `Fleet.all_names_every_job`, which ``--required``'s reading, its refusal
and the notes that name ``--required all`` take."""

from __future__ import annotations

from pathlib import Path

import pytest

import solver
from solver.api import _with_required
from solver.query import token_cap_source, token_cap_words
from solver.rules import API_OPTIONS, COMMAND_OPTIONS, CONFIG_TOKEN_CAP_SOURCE
from solver.solve import raised_cap_words
from solver.tables import EVERY_JOB, load_catalog, load_fleet
from solver.trinity.plan_keys import own_budget_change, own_budget_changes

CATALOG = load_catalog()
ACTOR = "trainer.trainer_config.actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
REF = "trainer.trainer_config.actor_rollout_ref.ref.log_prob_max_token_len_per_gpu"
TRAINER = "trainer.max_token_len_per_gpu"


def test_the_cap_source_is_the_source_else_the_option_as_named_else_either() -> None:
    assert token_cap_source(8192, CONFIG_TOKEN_CAP_SOURCE, COMMAND_OPTIONS) == CONFIG_TOKEN_CAP_SOURCE
    assert token_cap_source(8192, None, COMMAND_OPTIONS) == "--token-budget 8192"
    assert token_cap_source(8192, None, API_OPTIONS) == "token_budget=8192"
    assert token_cap_source(8192, None, None) == f"--token-budget 8192 or {CONFIG_TOKEN_CAP_SOURCE}"
    assert token_cap_words(8192, None, API_OPTIONS) == "capped by token_budget=8192"


def test_every_place_names_the_api_cap_as_the_api_gives_it() -> None:
    [answer] = solver.plan("qwen3-8b", gpu="h100", max_model_len=32768, token_budget=4096, explain=True)
    assert answer.token_cap_words(API_OPTIONS) == "capped by token_budget=4096"
    details = {reason.rule: reason.detail for reason in answer.explanation or ()}
    assert details["token_cap"].startswith("a micro-batch of 4096 tokens per GPU (token_budget=4096) must hold ")
    [refused] = solver.plan("qwen3-8b", gpu="h100", max_model_len=32768, token_budget=4096, budget_gpus=4)
    assert refused.token_budget_cap_raised is not None
    query = solver.make_query(CATALOG, model="qwen3-8b", gpu="h100", max_model_len=32768, token_budget=4096,
                              budget_gpus=4, option_names=API_OPTIONS)
    assert query.token_cap_limit == ("token_budget=4096", True)
    assert raised_cap_words(query, refused.token_budget_cap_raised) == (
        "a cap of 8192 tokens per GPU (token_budget=8192) trains 32768 tokens within 4 GPUs")
    assert "a cap of 8192 tokens per GPU (token_budget=8192) trains 32768 tokens" in (refused.reason or "")


def test_a_role_budget_repeating_its_source_goes_with_it_and_says_so() -> None:
    [answer] = solver.plan("qwen3-8b", gpu="h100", max_model_len=32768, budget_gpus=4)
    plan = answer.best
    assert plan is not None and (plan.sp, plan.max_token_len_per_gpu) == (4, 16384)
    given = {TRAINER: 4096.0, ACTOR: 4096.0, REF: 4096.0}
    # each repeats the trainer's budget, which it is filled from: it goes with it, to the plan's
    assert own_budget_change(plan, ACTOR, given) == (
        f"4096 raised to the plan's 16384 with {TRAINER}, whose value it repeats: set by hand, it overrides "
        "trainer.max_token_len_per_gpu for its role")
    assert own_budget_change(plan, REF, given) == (
        f"4096 raised to the plan's 16384 with {TRAINER}, whose value it repeats: set by hand, it overrides "
        "trainer.max_token_len_per_gpu for its role")
    # below the least, one of its own is raised: it holds no sequence
    assert own_budget_change(plan, ACTOR, {TRAINER: 16384.0, ACTOR: 4096.0}) == (
        "4096 raised to the plan's 16384, as below ceil(32768 / 4) = 8192 it holds no sequence of the plan's length: "
        "set by hand, it overrides trainer.max_token_len_per_gpu for its role")
    # one of its own between the least, ceil(32768 / 4) = 8192, and the plan's is kept
    assert own_budget_change(plan, ACTOR, {TRAINER: 16384.0, ACTOR: 12000.0}) == (
        "12000 kept, below the plan's 16384: it holds a sequence of the plan's length (ceil(32768 / 4) = 8192 tokens "
        "per GPU or more), so verl takes it, splitting that role's batch into more micro-batches of less memory, "
        "which the plan's figure bounds")


FLEET = "pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n" + "".join(
    f"  - {{name: {name}, model: Qwen3-8B, max_model_len: 8192}}\n" for name in ("{}", "b", "c"))
"""Three jobs, the first named as `FLEET.format` names it."""


@pytest.mark.parametrize(("first", "every", "required"), [("a", True, ["a", "b", "c"]), ("all", False, ["all"])])
def test_all_names_every_job_unless_a_job_is_named_so(tmp_path: Path, first: str, every: bool,
                                                      required: list[str]) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET.replace("{}", first), encoding="utf-8")
    fleet = load_fleet(path, CATALOG)
    assert fleet.all_names_every_job is every
    marked = _with_required(fleet, [EVERY_JOB], API_OPTIONS)
    assert [job.name for job in marked.jobs if job.required] == required


def test_the_budget_notes_name_the_roles_alone() -> None:
    # rolebudget2 kept a trainer's budget above the plan's and said so among these; since --write lowers it again,
    # own_budget_changes names the roles' own alone (criticbudget_s82: and the critic's; its release, optional again,
    # says only whether the ref's forward runs)
    [answer] = solver.plan("qwen3-8b", gpu="h100", max_model_len=32768, budget_gpus=4)
    assert answer.best is not None
    config = {"trainer": {"max_token_len_per_gpu": 65536, "trainer_config": {"actor_rollout_ref": {
        "actor": {"ppo_max_token_len_per_gpu": 12000}}}}}
    assert own_budget_changes(answer.best, config, {}) == [(ACTOR, (
        "12000 kept, below the plan's 16384: it holds a sequence of the plan's length (ceil(32768 / 4) = 8192 tokens "
        "per GPU or more), so verl takes it, splitting that role's batch into more micro-batches of less memory, "
        "which the plan's figure bounds"))]
