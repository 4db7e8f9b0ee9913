"""Which models verl's Ulysses SP can shard (session 70): verl 0.9.1's patch swaps a module-level
``_flash_attention_forward`` or transformers' flash-attention integration, which a checkpoint's own modeling code
(its ``auto_map``: InternLM2's) does not call, so SP above 1 would train such a model wrong without an error. The
planner holds SP=1 for it as a rule (`sp_attention`), `--sp` and config checks refuse it, and transformers' own
classes (the catalogue's, Phi-3's and DeepSeek-V2's with their ``auto_map``) keep every SP their heads allow."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.explain import _Prober, explain
from solver.query import make_query
from solver.solve import plan
from solver.tables import load_catalog, sp_attention_violation
from solver.tables.model_config import load_model_config
from solver.trinity import trinity_config_problems

HF_CONFIGS = Path(__file__).parent / "data" / "hf-configs"
INTERNLM2 = HF_CONFIGS / "internlm2-7b.json"
Cli = Callable[..., tuple[int, str, str]]
UNREACHED = ("verl's Ulysses patch swaps only a module-level _flash_attention_forward or transformers' own "
             "flash-attention function (verl 0.9.1 models/transformers/monkey_patch.py:544-552), and such code calls "
             "flash-attention its own way (InternLM2's from a method of its attention class), so each GPU would "
             "attend only within its own slice of the sequence, with no error")
INTERNLM2_WHY = ("model_type internlm2, which transformers has no class of, runs the checkpoint's own modeling code "
                 f"(its auto_map); {UNREACHED}")


def _config(tmp_path: Path, **changes: Any) -> Path:
    """InternLM2-7B's config.json with `changes` (a None value drops the key), written under `tmp_path`."""
    config = json.loads(INTERNLM2.read_text())
    config.update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value for key, value in config.items() if value is not None}))
    return path


def test_internlm2s_own_code_is_out_of_ulysses_reach_and_says_why_with_verls_lines():
    model = load_model_config(INTERNLM2)
    assert model.ulysses_unreached == INTERNLM2_WHY
    assert sp_attention_violation(model, 1) is None
    assert sp_attention_violation(model, 4) == f"SP=4 cannot shard its attention: {INTERNLM2_WHY}"


@pytest.mark.parametrize("file", ["Qwen3-8B", "Qwen3-30B-A3B", "Llama-3.2-3B", "Mistral-7B-v0.3",
                                  "DeepSeek-V2-Lite"])  # the last with an auto_map of a transformers class
def test_transformers_own_classes_are_reached_even_with_an_auto_map(file: str):
    assert load_model_config(HF_CONFIGS / f"{file}.json").ulysses_unreached is None


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"model_type": "llama"}, None),  # a transformers class: loaded unless trust_remote_code is on
        ({"model_type": "deepseek"}, "model_type deepseek, which transformers has no class of,"),  # DeepSeek-MoE's
        ({"model_type": "exaone"}, "model_type exaone, not one rft-solver knows transformers to have a class of,"),
        ({"model_type": None}, "no model_type, not one rft-solver knows transformers to have a class of,"),
        ({"auto_map": None}, None),  # no code of its own: transformers refuses a model_type it lacks
        ({"auto_map": {"AutoModelForCausalLM": "modeling_internlm2.InternLM2ForCausalLM"}}, None),  # no AutoConfig
        ({"auto_map": "modeling_internlm2"}, None),
    ],
)
def test_only_an_auto_map_config_of_a_model_type_transformers_lacks_is_unreached(
        tmp_path: Path, changes: dict[str, Any], why: str | None):
    unreached = load_model_config(_config(tmp_path, **changes)).ulysses_unreached
    if why is None:
        assert unreached is None
    else:
        assert unreached == f"{why} runs the checkpoint's own modeling code (its auto_map); {UNREACHED}"


@pytest.mark.parametrize("model", ["8B", "30B-A3B", "Qwen2.5-7B", "Llama-3.1-8B"])
def test_the_catalogues_models_are_transformers_classes_that_ulysses_reaches(model: str):
    catalog = load_catalog()
    assert catalog.model(model).ulysses_unreached is None
    query = make_query(catalog, gpu="h100", model=model, budget_gpus=8, max_model_len=32768, sp=2)
    (answer,) = plan(query, catalog)
    assert [(found.gpus, found.sp) for found in answer.plans] == [(8, 2)]


def test_the_planner_holds_sp_1_for_internlm2_where_it_planned_sp_4_before(cli: Cli):
    # Past SP=1's reach, 79872 tokens (test_padtokens_s71); before the rule, 65536 took Env + SP=4 on 8 GPUs, each GPU
    # attending within its quarter only.
    status, out, err = cli("--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len", "131072",
                           "--explain")
    words = " ".join(out.split())
    assert (status, err) == (1, "")
    assert ("limit no plan passes these rules together: SP must be 1, since verl's Ulysses patch does not reach the "
            "model's attention; nothing in the tables and the memory model's estimates vouches for internlm2-7b on "
            "H100-80GB at 131072 tokens within the limits above") in words


def test_an_explanation_names_the_sp_degrees_the_attention_rule_rules_out():
    catalog = load_catalog().with_model(load_model_config(INTERNLM2))
    query = make_query(catalog, gpu="h100", model="internlm2-7b", budget_gpus=8, objective="max_len")
    (answer,) = plan(query, catalog)
    # one sequence per micro-batch, T = L: test_padtokens_s71
    assert [(found.gpus, found.sp, found.max_model_len) for found in answer.plans] == [(8, 1, 79872)]
    reasons = [(reason.rule, reason.detail) for reason in explain(catalog, query, answer)]
    assert ("sp_attention", (f"verl's Ulysses SP does not reach the attention of internlm2-7b: that rules out SP=2, "
                             f"4, 8 (on 6, 8 GPUs): {INTERNLM2_WHY}")) in reasons


@pytest.mark.parametrize("command", [(), ("memory",)])
def test_a_pinned_sp_above_1_is_bad_input_naming_why_and_sp_1(cli: Cli, command: tuple[str, ...]):
    status, out, err = cli(*command, "--model-config", str(INTERNLM2), "--gpu", "h100", "--gpus", "8", "--len",
                           "32768", "--sp", "2")
    room = "divide the 8 trainer GPUs, that " if command else ""
    assert (status, out) == (2, "")
    assert err == (f"solve{' memory' if command else ''}: error: --sp 2 is not allowed for internlm2-7b: SP=2 cannot "
                   f"shard its attention: {INTERNLM2_WHY} (the degrees {'that ' + room if room else 'that '}"
                   "internlm2-7b's heads and attention allow and that keep an SP group in a node of 8 GPUs: 1)\n")


def test_a_trinity_config_at_sp_2_breaks_the_attention_rule(cli: Cli, tmp_path: Path):
    config = Path(__file__).parent.parent / "docs" / "examples" / "trinity.yaml"
    text = config.read_text().replace("trainer:\n  save_interval: 100\n",
                                      "trainer:\n  save_interval: 100\n  ulysses_sequence_parallel_size: 2\n")
    (tmp_path / "t.yaml").write_text(text)
    status, out, err = cli("--from-config", str(tmp_path / "t.yaml"), "--model-config", str(INTERNLM2), "--gpu",
                           "h100", "--json")
    (answer,) = json.loads(out)
    assert (status, err) == (0, "")
    assert answer["current"]["broken_rule_code"] == "sp-model-attention"
    assert answer["current"]["broken_rule"] == f"internlm2-7b: SP=2 cannot shard its attention: {INTERNLM2_WHY}"
    # the broken rule says it, not a problem too; dynamic batching and remove padding on by default (at both keys):
    # test_padbound_s71, test_remotepad_s70
    assert answer["current"]["config_problem_codes"] == ["micro-batch-unbounded", *["remove-padding-on"] * 2]
    assert [(found["gpus"], found["sp"]) for found in answer["plans"]] == [(6, 1)]


def test_a_roles_own_sp_above_1_is_a_problem_not_a_refusal():
    model = load_model_config(INTERNLM2)
    mapping = {"trainer": {"trainer_config": {"actor_rollout_ref": {"ref": {"ulysses_sequence_parallel_size": 2}}}}}
    problems = trinity_config_problems(mapping, model, 4, version="0.5")
    key = "trainer.trainer_config.actor_rollout_ref.ref.ulysses_sequence_parallel_size"
    assert ("sp-model-attention", f"{key}: SP=2 cannot shard its attention: {INTERNLM2_WHY} (internlm2-7b)") in [
        tuple(problem) for problem in problems]


def test_an_undecided_explanation_names_the_attention_rule_only_where_it_is_in_force(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(_Prober, "_infeasible", lambda self, assumptions: False)  # every question undecided
    catalog = load_catalog().with_model(load_model_config(INTERNLM2))
    words = "SP must be 1, since verl's Ulysses patch does not reach the model's attention"
    for model, in_force in (("internlm2-7b", True), ("8B", False)):
        query = make_query(catalog, gpu="h20", model=model, budget_gpus=2, max_model_len=131072)
        (answer,) = plan(query, catalog)
        (limit, *_) = explain(catalog, query, answer)
        assert limit.rule == "limit" and (words in limit.detail) == in_force
