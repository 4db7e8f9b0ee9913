"""Hints a user missed (session 58): under --minimize gpus, the fewer GPUs --token-budget auto trains the length on;
--host-ram echoed with its unit (2TB as 2048GB); a key misplaced in a config's section named where it is read; a
refusal where nothing trains says how far --token-budget auto reaches, as one where the length is beyond reach does."""

from __future__ import annotations

import json
from typing import Any

import pytest

import solver
import solver.solve
from solver.query import ACTOR_ROLLOUT_REF
from solver.results import ReasonCode
from solver.rules import COMMAND_OPTIONS
from solver.tables import load_catalog
from solver.trinity.checks import check_trinity_config

FEWER_LINE = ("fewer GPUs     --token-budget auto trains it on 2 GPUs (2 fewer): Env + Offload + SP=2 with a lowered "
              "max_token_len_per_gpu of 50176 (estimated)")


def test_fewest_gpus_says_where_a_lowered_budget_takes_fewer(cli):
    # Qwen3-8B at 65536 on H100s: 4 GPUs at Trinity's default budget, 2 with --token-budget auto (a lowered one).
    status, out, _ = cli("--minimize", "gpus", "--len", "65536", "--model", "8B", "--gpu", "h100")
    assert status == 0 and "plan           Env + Offload + SP=4 on 4 GPUs\n" in out and FEWER_LINE in out
    status, out, _ = cli("--minimize", "gpus", "--len", "65536", "--model", "8B", "--gpu", "h100", "--gpus", "6",
                         "--json")
    (answer,) = json.loads(out)
    fewer = answer["token_budget_auto"]
    assert (fewer["gpus"], fewer["sp"], fewer["env"], fewer["offload"]) == (2, 2, True, True)
    assert (fewer["max_token_len_per_gpu"], fewer["lowered_budget"], fewer["unused_gpus"]) == (50176, True, 4)
    # What --token-budget auto answers itself: the alternative is that question's best.
    (lowered,) = solver.plan("8B", gpu="h100", objective="min_gpus", max_model_len=65536, budget_gpus=6,
                             token_budget="auto")
    assert lowered.best is not None and lowered.best.model_dump(mode="json") == fewer


def _lowered_solves(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The questions with --token-budget auto that `solve.answer_for` is asked from now on."""
    asked: list[Any] = []
    real = solver.solve.answer_for

    def spy(catalog: Any, query: Any, gpu: str, *args: Any, **kwargs: Any) -> Any:
        if query.token_budget == "auto":
            asked.append(query)
        return real(catalog, query, gpu, *args, **kwargs)

    monkeypatch.setattr(solver.solve, "answer_for", spy)
    return asked


@pytest.mark.parametrize("changes", [
    {"token_budget": "auto"},  # lowers budgets already: its best is the fewest with them
    {"estimate": "never"},  # no estimates, whose budgets are lowered
    {"objective": "cheapest", "budget_gpus": 6},  # not the fewest GPUs
])
def test_no_lowered_alternative_where_the_answer_cannot_change(monkeypatch: pytest.MonkeyPatch,
                                                               changes: dict[str, Any]):
    # Qwen3-8B at 65536 on A100s: 4 GPUs, documented; --minimize gpus with --token-budget auto gives 2.
    asked = _lowered_solves(monkeypatch)
    (answer,) = solver.plan("8B", gpu="a100", **{"objective": "min_gpus", "max_model_len": 65536, **changes})
    assert answer.best is not None and answer.token_budget_auto is None
    assert [query for query in asked if query.token_budget != changes.get("token_budget")] == []


def test_no_solve_for_a_lowered_budget_where_the_best_takes_one_gpu(monkeypatch: pytest.MonkeyPatch):
    asked = _lowered_solves(monkeypatch)
    (answer,) = solver.plan("4B", gpu="h100", objective="min_gpus", max_model_len=8192)
    assert answer.best is not None and answer.best.gpus == 1 and answer.token_budget_auto is None and asked == []


def test_the_lowered_alternative_keeps_the_pins_and_asks_one_plan(monkeypatch: pytest.MonkeyPatch):
    asked = _lowered_solves(monkeypatch)
    (answer,) = solver.plan("8B", gpu="h100", objective="min_gpus", max_model_len=65536, offload=True, top=3)
    fewer = answer.token_budget_auto
    assert fewer is not None and fewer.offload and fewer.gpus < answer.plans[0].gpus
    assert [(query.top, query.offload, query.budget_gpus) for query in asked] == [(1, True, answer.plans[0].gpus - 1)]
    # SP=4 pinned needs 4 GPUs: a lowered budget takes no fewer, and the answer says nothing of it.
    (pinned,) = solver.plan("8B", gpu="h100", objective="min_gpus", max_model_len=65536, sp=4)
    assert pinned.best is not None and pinned.best.gpus == 4 and pinned.token_budget_auto is None


def test_host_ram_given_in_tb_is_echoed_in_gb(cli):
    status, out, _ = cli("--model", "14B", "--len", "20k", "--gpus", "8", "--gpu", "a100", "--host-ram", "0.01TB",
                         "--offload")
    words = " ".join(out.split())
    assert status == 1 and "trains with --offload --host-ram 10.24 GiB; without --host-ram, " in words
    status, out, _ = cli("--model", "14B", "--len", "256k", "--gpus", "4", "--gpu", "a100", "--host-ram", "2TB",
                         "--offload")
    assert status == 1 and "within 4 GPUs with --offload --host-ram 2048 GiB: the longest" in " ".join(out.split())


def test_a_misplaced_key_is_named_where_it_is_read():
    # Trinity's mode (the top level's) under actor_rollout_ref: spelt almost as model, which that section reads too.
    mapping: dict[str, Any] = {"model": {"max_model_len": 4096}}
    node = mapping
    for part in ACTOR_ROLLOUT_REF:
        node = node.setdefault(part, {})
    node["mode"] = "train"
    (problem,) = check_trinity_config(mapping, load_catalog().model("8B"), 4, version="0.6")
    assert problem.startswith(
        "trainer.trainer_config.actor_rollout_ref.mode: did you mean model? That key is unset, and read as such; or is "
        "it mode misplaced (a key of the config's top level, read there)? (")
    # A key read nowhere else is a misspelling alone.
    (problem,) = check_trinity_config({"trainr": {}, "model": {"max_model_len": 4096}}, load_catalog().model("8B"), 4)
    assert problem.startswith("trainr: did you mean trainer? That key is unset, and read as such; Trinity refuses")


REACH = ("; --token-budget auto reaches 1024 tokens on the 1024-token grid: Env on 4 GPUs with max_token_len_per_gpu "
         "= 1024 (estimated, extrapolated)")


def test_nothing_trains_says_how_far_a_lowered_budget_reaches():
    # Qwen3-4B on 4 A10s with --sp 1 --no-offload: nothing at Trinity's default budget, 1024 tokens with a lowered one.
    (answer,) = solver.plan("4B", gpu="a10", budget_gpus=4, max_model_len=32768, sp=1, offload=False, explain=True,
                            option_names=COMMAND_OPTIONS)  # the command's words, REACH's
    assert answer.reason_code == ReasonCode.NOTHING_TRAINS and answer.reason is not None
    assert answer.reason.endswith(REACH)
    assert answer.explanation is not None
    (lowered,) = [reason.detail for reason in answer.explanation if reason.rule == "lower_token_budget"]
    assert lowered.startswith("--token-budget auto reaches 1024 tokens on the 1024-token grid within 4 GPUs: Env on "
                              "4 GPUs")
    # With --token-budget auto, 1024 tokens train: the length is beyond reach, and no budget is lowered further.
    (auto,) = solver.plan("4B", gpu="a10", budget_gpus=4, max_model_len=32768, sp=1, offload=False,
                          token_budget="auto")
    assert auto.reason_code == ReasonCode.LENGTH_BEYOND_REACH and auto.nearest is not None
    assert auto.nearest.max_model_len == 1024 and "--token-budget auto reaches" not in (auto.reason or "")
