"""The docs' claims session 76 added that a test can read (docstruth12's second pass): the keywords trinity.md says
Trinity gives vLLM itself, as `engine-args-repeated-refused` takes them; the steps cluster.md's ``wall_clock_stopped``
lists name, as the words of `WALL_CLOCK_STEPS`; the cost weights' defaults planner.md and api.md name, as `Weights`
has them; planner.md's figures of a PPO critic in the cost."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.render.cluster import WALL_CLOCK_STEPS
from solver.tables import Weights
from solver.trinity.checks import lora_targets_problem
from solver.trinity.config import ENGINE_GIVEN_KEYS, ENGINE_LORA_KEYWORDS

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _prose(page: str) -> str:
    """`page`'s text with its lines joined, as one paragraph reads across them."""
    return " ".join((DOCS / page).read_text(encoding="utf-8").split())


def _between(text: str, start: str, end: str) -> str:
    """The text of `text` after `start`, up to `end` (both found once after it)."""
    assert text.count(start) == 1, start
    after = text.split(start, 1)[1]
    assert end in after, end
    return after.split(end, 1)[0]


def _spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def test_trinity_md_names_every_keyword_trinity_gives_vllm_and_the_key_that_sets_it() -> None:
    listed = _between(_prose("trinity.md"), "One line names each such key and the config key Trinity takes it from, "
                      "which sets it instead: ", ", which no key changes.")
    pairs = dict(re.findall(r"`(\w+)` \(`([\w.]+)`", listed))
    same_name = _spans(_between(listed, "(`model.max_model_len`), ", " (each the rollout model's key of that name)"))
    fixed = _spans(listed.split("those Trinity fixes itself", 1)[1])
    named = {span for span in _spans(listed) if re.fullmatch(r"[a-z_]+", span)}
    # `top_p` and the like are model keys after `model.temperature`, `rope_theta` one after `model.rope_scaling`.
    config_keys = {"top_p", "top_k", "max_response_tokens", "repetition_penalty", "rope_theta"}
    assert named - config_keys == {*ENGINE_GIVEN_KEYS, *ENGINE_LORA_KEYWORDS, "hf_overrides"}
    assert sorted(fixed) == sorted(keyword for keyword, key in ENGINE_GIVEN_KEYS.items() if key == "")
    assert [keyword for keyword in same_name
            if not ENGINE_GIVEN_KEYS[keyword].startswith(f"explorer.rollout_model.{keyword}")] == []
    assert len(pairs) == 6 and [keyword for keyword, key in pairs.items()
                                if not ENGINE_GIVEN_KEYS[keyword].startswith(key)] == []


def test_cluster_md_wall_clock_steps_are_those_the_words_name() -> None:
    text = _prose("cluster.md")
    placement = _between(text, '"wall_clock_stopped": [the steps the wall clock stopped first, in order: ',
                         "; empty where none was")
    purchase = _between(text, '"wall_clock_stopped" (', ")")
    steps = re.findall(r'"([A-Za-z -]+)"', placement) + re.findall(r'"([A-Za-z -]+)"', purchase)
    assert set(steps) == set(WALL_CLOCK_STEPS)
    assert "stay notes" in re.findall(r'"([a-z -]+)"', placement)  # --current's step, named since session 76


def test_planner_md_and_api_md_give_the_weights_defaults_as_weights_has_them() -> None:
    defaults = Weights()
    said = _between(_prose("planner.md"), "weight the file leaves out takes the shipped file's value (", ")")
    pairs = dict(re.findall(r"`(\w+)` ([\w.]+)", said))
    assert set(pairs) == set(Weights.model_fields)
    assert {name: (value == "true" if value in ("true", "false") else float(value)) for name, value in pairs.items()} \
        == defaults.model_dump()
    api = _between(_prose("api.md"), "| `solver.load_weights(path=None, *, file_readers=API_FILE_READERS)` |",
                   "| `TableError` |")
    names, values = api.split("`Weights` (", 1)[1].split(": each the shipped file's value, ")
    assert _spans(names) == list(Weights.model_fields)
    assert re.findall(r"[\w.]+", values.split(" where ")[0].replace(" and ", ", ")) == [
        "True" if value is True else f"{value:g}" for value in defaults.model_dump().values()]


@pytest.mark.parametrize(("asked", "plan"), [
    ({"critic": "resident"}, (True, True, 2, 0.4166)),
    ({"critic": "resident", "sp": 8, "offload": False}, (True, False, 8, 0.4293)),
    ({"sp": 8, "offload": False}, (True, False, 8, 0.2146)),
    ({"sp": 2, "offload": True}, (True, True, 2, 0.2777)),
    ({}, (True, False, 4, 0.1641)),
], ids=["critic-best", "critic-sp8", "sp8", "offload-sp2", "best"])
def test_planner_md_figures_of_the_14b_turn_with_a_resident_critic(asked: dict[str, Any],
                                                                   plan: tuple[object, ...]) -> None:
    # planner.md's "A PPO critic in the cost": Qwen3-14B at 32768 on 8 H100s.
    (answer,) = solver.plan("Qwen3-14B", gpu="h100", budget_gpus=8, max_model_len=32768, **asked)
    best = answer.best
    assert best is not None and (best.gpus, best.env, best.offload, best.sp, round(best.cost, 4)) == (8, *plan)


def test_planner_md_says_the_resident_critic_leaves_no_room_for_the_best_plan_without_it() -> None:
    assert "leaves no room for the resident critic's states: 26624 tokens at most" in _prose("planner.md")
    (answer,) = solver.plan("Qwen3-14B", gpu="h100", budget_gpus=8, max_model_len=32768, critic="resident", sp=4,
                            offload=False)
    assert answer.best is None and "the longest is 26624 on the 1024-token grid" in (answer.reason or "")


def test_concepts_md_a_resident_critic_leaves_the_8b_cell_s_setting_no_room() -> None:
    assert ("Qwen3-8B at 32768 on 4 A100s, documented at `SP=4`, takes Env + Offload + SP=2 with a resident critic"
            in _prose("concepts.md"))
    settings = []
    for critic in (None, "resident"):
        (answer,) = solver.plan("Qwen3-8B", gpu="a100", budget_gpus=4, exact=True, max_model_len=32768, critic=critic)
        best = answer.best
        assert best is not None
        settings.append((best.env, best.offload, best.sp, best.evidence))
    assert settings == [(False, False, 4, "documented"), (True, True, 2, "estimated")]
    (pinned,) = solver.plan("Qwen3-8B", gpu="a100", budget_gpus=4, exact=True, max_model_len=32768,
                            critic="resident", sp=4, offload=False)
    assert pinned.best is None  # memory, not the cost, rules the cell's setting out


@pytest.mark.parametrize(("excluded", "model", "words"), [
    (".*", "Qwen3-8B", "All modules were excluded"),
    ("model.*", "Qwen3-8B", "No modules were targeted for adaptation"),  # lm_head neither adapted nor excluded
    (".*(?<!experts)", "Qwen3-8B", "All modules were excluded"),
    (".*(?<!experts)", "Qwen3-30B-A3B", "No modules were targeted for adaptation"),  # a layer's mlp.experts left
], ids=["every-module", "lm-head-left", "experts-left-dense", "experts-left-moe"])
def test_an_exclude_modules_that_leaves_no_module_quotes_the_error_peft_raises(excluded: str, model: str,
                                                                               words: str) -> None:
    # the mixture of experts judged on transformers 4's separate experts (Trinity 0.5.1's): under transformers 5
    # PEFT adds all-linear's routed experts as target_parameters whatever exclude_modules says (fragcheck4, s80), so
    # the exclusion is taken there (test_fragcheck4_s80)
    # peft 0.21.2 raises "All modules were excluded" where no module is left neither adapted nor excluded
    # (tuners_utils.py:1052 to :1057), "No modules were targeted for adaptation" otherwise (:1074 to :1086); the line
    # quoted the second for both, as trinity.md did. Judged on the model's names since peftgap_s77 (the config's
    # reading gave a dense model's and a mixture of experts' words side by side).
    layout = "separate" if model == "Qwen3-30B-A3B" else "fused"
    problem = lora_targets_problem(None, excluded, solver.load_catalog().model(model), layout)
    assert problem is not None and problem.code.value == "lora-configs-refused"
    assert problem.words.startswith(f"model.lora_configs[0].exclude_modules '{excluded}', on {model} (a ")
    assert f"), leaves out every module target_modules 'all-linear' matches (\"{words}\"): peft " in problem.words
    assert problem.words.endswith("and Trinity fails as it makes the adapter: exclude fewer, or remove it")
    assert ('one that leaves none raises "All modules were excluded" where it leaves out every module (`.*`: `:1052` '
            'to `:1057`), else "No modules were targeted for adaptation" (`:1074` to `:1086`)') in _prose("trinity.md")
