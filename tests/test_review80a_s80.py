"""Review of s80's first merges (review80a): (a) the questions `solve` asks before a pinned question's own ranking
(without the pins, with the most host memory) take at most half of the answer's time limit (`ASKED_FIRST_SHARE`), so
that the ranking of the question asked always has the other half, where before they could take it all and leave the
user's own question ``unknown``; (b) ``config_query(lora_exclude_modules=)`` without ``lora_targets=`` excludes from
the config's own ``target_modules``, where before it counted all-linear less the exclusions; (c) a release that may run
either transformers counts the larger padding of a mixture of experts' two layouts (Qwen1.5-MoE's separate weights on
6 GPUs), where before it counted the fused tensors' alone."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from test_review79b_s79 import CONFIG, QV

import solver
import solver.clock
import solver.solve
from solver.api import answer_query, config_query
from solver.memory import expert_padding, lora_parameters
from solver.tables import QueryError, load_catalog
from solver.tables.model_config import load_model_config
from solver.tables.peft_names import LoraTargets
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
PINNED = ("--model", "8B", "--gpu", "A100-80GB", "--gpus", "6", "--len", "32k", "--json")
"""Qwen3-8B at 32768 tokens within 6 A100s, pinned below with --sp 4: the question without the pin (Env + SP=2 on 6)
does not answer it, so its own ranking solves."""


class _StandingClock:
    """A clock that stands still but where a test moves it (`now`), as `solver.solve` and `solver.clock` read it; the
    seconds each CP-SAT solve of the planner was given, in order (`given`)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.now = 1000.0
        self.given: list[float] = []
        monkeypatch.setattr(solver.solve, "time", SimpleNamespace(monotonic=lambda: self.now))
        monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - self.now)
        solved = solver.solve._solved

        def spied_solved(cp_solver: Any, model: Any) -> Any:
            status = solved(cp_solver, model)
            self.given.append(cp_solver.parameters.max_time_in_seconds)
            return status

        monkeypatch.setattr(solver.solve, "_solved", spied_solved)


def test_the_question_without_the_pins_has_half_the_time_limit(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # its solve gets 5 s of --time-limit 10; the pinned ranking's and the further questions' the whole 10 (the clock
    # stands still)
    clock = _StandingClock(monkeypatch)
    status, out, _ = cli(*PINNED, "--sp", "4")
    (answer,) = json.loads(out)
    assert (status, answer["status"], clock.given[0]) == (0, "optimal", 5.0)
    assert set(clock.given[1:]) == {10.0}
    assert (answer["plans"][0]["gpus"], answer["plans"][0]["sp"], answer["unpinned"]["sp"]) == (4, 4, 2)


def test_the_questions_asked_first_leave_the_ranking_half(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    # the question without the pins takes its whole half: the host-limit question is not asked first (its half has
    # passed), and the pinned ranking's solves get the 5 s left, where before the first could take all 10 and leave
    # them a millisecond
    clock = _StandingClock(monkeypatch)
    unpinned_first = solver.solve._unpinned_first
    asked: list[Any] = []

    def slow_unpinned_first(*args: Any, **kwargs: Any) -> Any:
        found = unpinned_first(*args, **kwargs)
        clock.now += 5.0
        return found

    answer_for = solver.solve.answer_for

    def spied_answer_for(catalog: Any, query: Any, gpu: str, **kwargs: Any) -> Any:
        asked.append(query.host_ram_gb)
        return answer_for(catalog, query, gpu, **kwargs)

    monkeypatch.setattr(solver.solve, "_unpinned_first", slow_unpinned_first)
    monkeypatch.setattr(solver.solve, "answer_for", spied_answer_for)
    # Trinity 0.5.1 loads the untied Qwen3-8B on rank 0 alone: with no release named, each of SP=4's 4 ranks loads it
    # (s84), 122.0 GiB, more than --host-ram 96.
    status, out, _ = cli(*PINNED, "--sp", "4", "--host-ram", "96", "--trinity-version", "0.5.1")
    (answer,) = json.loads(out)
    assert (status, answer["status"], clock.given[0], clock.given[1]) == (0, "optimal", 5.0, 5.0)
    assert asked[:2] == [96, 96]  # without the pins, then the ranking's: not the most host memory's in between
    assert (answer["plans"][0]["gpus"], answer["plans"][0]["sp"]) == (4, 4)


# (b) Before: config_query(lora_exclude_modules=) without lora_targets= counted all-linear less the exclusions, though
# the config keeps its own adapter on q_proj and v_proj: Qwen3-8B's k, o and MLP projections were counted too.

def _config_answer(**keywords: Any) -> solver.Answer:
    """The API's answer on an A100-80GB for review79b's CONFIG (Qwen3-8B, LoRA rank 64 on q_proj and v_proj)."""
    config = read_trinity_config(CONFIG % QV, "grpo.yaml", {})
    (answer,) = answer_query(config_query(CATALOG, config, gpu="A100-80GB", **keywords), CATALOG)
    return answer


def test_exclusions_alone_leave_modules_out_of_the_configs_own_targets() -> None:
    answer = _config_answer(lora_exclude_modules=".*\\.v_proj")
    assert answer.best is not None and answer.query is not None
    assert answer.query.lora_targets == LoraTargets(QV, ".*\\.v_proj")
    assert (answer.best.lora_target_modules, answer.best.lora_exclude_modules) == (QV, ".*\\.v_proj")
    counted = lora_parameters(CATALOG.model("Qwen3-8B").model_copy(update={"lora_targets": answer.query.lora_targets}),
                              64)
    assert counted == 18_874_368  # q_proj alone (before: all-linear less v_proj)


def test_exclusions_of_every_config_target_are_refused() -> None:
    with pytest.raises(QueryError) as raised:
        _config_answer(lora_exclude_modules=".*_proj")
    assert str(raised.value) == (
        "lora_exclude_modules '.*_proj', on Qwen3-8B, leaves out every module the config's target_modules "
        "'.*\\.(q_proj|v_proj)' matches (\"No modules were targeted for adaptation\"): exclude fewer, or remove it")


def test_the_fragment_refusal_names_the_exclusions() -> None:
    # the plan counts q_proj alone, fewer parameters than the config's adapter, which the fragment keeps: the refusal
    # says what it counted and how to set the config to it (before: "set them to '.*\.(q_proj|v_proj)'", no change)
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(_config_answer(lora_exclude_modules=".*\\.v_proj"))
    assert str(raised.value) == (
        "config: the plan counted its LoRA adapter on '.*\\.(q_proj|v_proj)' less exclude_modules '.*\\.v_proj' "
        "(18,874,368 parameters), but the config's own target_modules (model.lora_configs), which trinity_config "
        "keeps, adapt 30,670,848: plan on them (leave lora_targets and lora_exclude_modules out), or set them to "
        "'.*\\.(q_proj|v_proj)' and exclude_modules to '.*\\.v_proj' first")


def test_exclusions_beside_full_fine_tuning_are_refused_as_before() -> None:
    with pytest.raises(QueryError) as raised:
        _config_answer(lora_exclude_modules=".*\\.v_proj", lora_rank=0)
    assert str(raised.value) == ("lora_exclude_modules '.*\\.v_proj' without LoRA: the exclusions are a LoRA "
                                 "adapter's; give a lora_rank above 0")


# (c) Before: a release that may run either transformers (0.5, 0.5.0, 0.5.2: `either`) counted the fused tensors'
# padding alone, though where transformers 4 makes the type's experts nn.Linear its separate weights pad more:
# Qwen1.5-MoE's on 3 and 6 GPUs, where the fused tensors, placed as verl 0.7 places them, pad none.

@pytest.mark.parametrize(("gpus", "either"), [(3, 4_608_000), (6, 3_317_760), (8, 0)])
def test_either_layout_counts_the_larger_padding(gpus: int, either: int) -> None:
    model = load_model_config(Path("tests/data/hf-configs/Qwen1.5-MoE-A2.7B.json"))
    assert (expert_padding(model, gpus, "either"), expert_padding(model, gpus, "separate")) == (either, either)


def test_either_layout_of_experts_transformers_4_keeps_fused_pads_as_before() -> None:
    # Qwen3-30B-A3B's separate and placed fused tensors pad none on 6 GPUs; Mixtral's fused ones, by rows where no
    # dimension divides 3 GPUs, 1,879,048,192 (its separate 3,145,728): the larger, as before
    qwen = CATALOG.model("Qwen3-30B-A3B")
    mixtral = load_model_config(Path("tests/data/hf-configs/Mixtral-8x7B-v0.1.json"))
    assert (expert_padding(qwen, 6, "either"), expert_padding(qwen, 6, "fused")) == (0.0, 150_994_944.0)
    assert (expert_padding(mixtral, 3, "either"), expert_padding(mixtral, 3, "separate")) == (1_879_048_192.0,
                                                                                              3_145_728.0)
