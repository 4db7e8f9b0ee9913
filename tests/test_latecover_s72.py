"""Changed lines of session 72's late merges (buytie, tokbudget, lenwords, yamlwords) that their tests left unrun,
each run here for what it says: the prompt + response note at another length than the sum (the verdict at
``--len``'s, or the API's ``max_model_len``'s), a null micro-batch size beside dynamic batching left on for a model
trained one sequence per micro-batch, and a RoPE factor, a whole document or oc.decode's referred argument that is no
number, no mapping or no text, quoted in YAML's spelling. And two arms the tests left unjudged: the rollout that takes
the actor's token budget (no trainer's budget read on Trinity 0.5 where every pass has its own), and the critic's
budgets read only where its passes read one (dynamic batch sizes on)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.api import answer_query, config_query, with_config_verdicts
from solver.tables import load_catalog
from solver.tables.model_config import load_model_config
from solver.trinity import ConfigError, load_config_mapping, read_trinity_config, trinity_config_problems

ROOT = Path(__file__).parent.parent
Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
SUM_ONLY = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_prompt_tokens: 2048\n  max_response_tokens: 14336\n"
            "cluster:\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n")
"""Qwen3-8B with no model.max_model_len: Trinity takes prompt + response, 2048 + 14336 = 16384."""
SUM_NOTE = ("model.max_model_len is not set: Trinity takes max_prompt_tokens + max_response_tokens = "
            "2048 + 14336 = 16384")


@pytest.mark.parametrize(("length", "note"), [
    ("16384", f"{SUM_NOTE}, as the verdict does"),
    ("32k", f"{SUM_NOTE}; the verdict is at --len's 32768")])
def test_the_prompt_and_response_note_names_the_length_the_verdict_is_at(
        cli: Cli, tmp_path: Path, length: str, note: str):
    config = tmp_path / "sum.yaml"
    config.write_text(SUM_ONLY, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--len", length, "--json")
    assert (status, err) == (0, "")
    [answer] = json.loads(out)
    assert [line for line in answer["current"]["config_problems"] if "max_response_tokens =" in line] == [note]


def test_the_api_names_the_verdicts_length_in_the_prompt_and_response_note_by_its_keyword():
    config = read_trinity_config(SUM_ONLY, "sum.yaml", {})
    query = config_query(CATALOG, config, gpu="h100", max_model_len=32768)
    (answer,) = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, SUM_ONLY, "sum.yaml", {})
    assert answer.current is not None
    assert [line for line in answer.current.config_problems if "max_response_tokens =" in line] == [
        f"{SUM_NOTE}; the verdict is at max_model_len's 32768"]


ARR = "trainer.trainer_config.actor_rollout_ref"
UNBOUNDED = ("trainer.use_dynamic_bsz is true: remove padding off (as internlm2-7b needs) pads each micro-batch to its "
             "longest sequence, and dynamic batching fills it by the sequences' own lengths, so one of uneven lengths "
             "holds more tokens than the token budget the memory estimate counts: set it to false, with one sequence "
             "per micro-batch (solver.trinity.patch_trinity_config does)")
NULL_06_ON = ("Trinity 0.6 fails on it as the trainer starts with verl before 0.8 (its typed config refuses it), and "
              "on verl 0.8 or later reads no micro-batch size with dynamic batch sizes on: remove the key for "
              "Trinity's default (1), or write 1")
NULL_05 = "Trinity 0.5's typed config refuses it as it loads the config (OmegaConf's int field)"


@pytest.mark.parametrize(("version", "null_words"), [("0.6", NULL_06_ON), (None, f"{NULL_05}; {NULL_06_ON}")])
def test_a_null_size_beside_dynamic_batching_on_for_a_model_of_its_own_attention_is_reported(
        version: str | None, null_words: str):
    # InternLM2 trains one sequence per micro-batch (remove padding off): dynamic batching on is flagged, and a null
    # size Trinity types int is reported as for any model with dynamic batch sizes on (no sizes judged past that).
    model = load_model_config(ROOT / "tests" / "data" / "hf-configs" / "internlm2-7b.json")
    config = {"model": {"max_model_len": 4096}, "algorithm": {"algorithm_type": "grpo"}, "trainer": {
        "use_dynamic_bsz": True, "use_remove_padding": False, "trainer_config": {"actor_rollout_ref": {
            "model": {"use_remove_padding": False}, "ref": {"log_prob_micro_batch_size_per_gpu": None}}}}}
    found = trinity_config_problems(config, model, 4, version=version)  # type: ignore[arg-type]
    assert [(problem.code.value, problem.words) for problem in found] == [
        ("micro-batch-unbounded", UNBOUNDED),
        ("micro-batch-unset", f"{ARR}.ref.log_prob_micro_batch_size_per_gpu is null: {null_words}")]


@pytest.mark.parametrize(("factor", "shown"), [("abc", "'abc'"), (True, "true"), ([4], "[4]")])
def test_a_rope_factor_that_is_no_number_is_quoted_as_yaml_writes_it(factor: Any, shown: str):
    rope = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": 32768, "rope_theta": 1000000}
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 65536, "rope_scaling": rope}}
    problems = trinity_config_problems(mapping, CATALOG.model("8B"), 8)
    assert [(problem.code.value, problem.words) for problem in problems] == [
        ("not-a-number", f"model.rope_scaling.factor must be a number, got {shown}")]


@pytest.mark.parametrize(("text", "shown"), [("", "an empty document"), ("true\n", "true"), ("text\n", "'text'")])
def test_a_config_that_is_no_mapping_names_what_it_is_as_yaml_writes_it(text: str, shown: str):
    with pytest.raises(ConfigError) as refused:
        read_trinity_config(text, "t.yaml", {})
    assert str(refused.value) == (
        f"t.yaml: a Trinity config is a mapping of sections (model, cluster, trainer, ...), got {shown}")


@pytest.mark.parametrize("value", ["true", ".inf"])
def test_oc_decode_of_a_reference_to_no_text_names_the_value_as_yaml_writes_it(value: str):
    # The reference's value, not its written ${x}: a boolean or a float, which OmegaConf's oc.decode refuses.
    text = (f"model: {{model_path: Qwen/Qwen3-8B, max_model_len: 4096}}\nx: {value}\n"
            "buffer:\n  batch_size: ${oc.decode:${x}}\n")
    problems = trinity_config_problems(load_config_mapping(text, "t.yaml"), CATALOG.model("8B"), 8)
    assert problems[0].words.startswith("x: no release of Trinity")  # the test's own key, refused too
    assert [(problem.code.value, problem.words) for problem in problems][1:] == [("unresolved-value-refused", (
        f"buffer.batch_size: '${{oc.decode:${{x}}}}': OmegaConf's oc.decode takes text or null, not {value}; every "
        "Trinity release refuses the config as it loads it (OmegaConf resolves each value then)"))]


BELOW_05 = ("trainer.max_token_len_per_gpu 4096 x SP 1 is below model.max_model_len 16384: Trinity 0.5 raises it to "
            "ceil(16384 / 1) = 16384 (Trinity 0.5.0 to its default, ceil(2 x 16384 / 1) = 32768)")


@pytest.mark.parametrize(("roles", "trainer_read"), [
    ({"actor": {"ppo_max_token_len_per_gpu": 65536}, "ref": {"log_prob_max_token_len_per_gpu": 65536}}, False),
    ({"ref": {"log_prob_max_token_len_per_gpu": 65536}}, True)])
def test_on_trinity_0_5_the_trainers_budget_is_judged_only_where_a_pass_takes_it(
        roles: dict[str, Any], trainer_read: bool):
    # The rollout sets none of its own but takes the actor's where set: then no pass reads the trainer's 4096.
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 16384},
               "algorithm": {"algorithm_type": "grpo"},
               "trainer": {"max_token_len_per_gpu": 4096, "trainer_config": {"actor_rollout_ref": roles}}}
    problems = trinity_config_problems(mapping, CATALOG.model("8B"), 8, version="0.5")
    below = [problem.words for problem in problems if problem.code.value == "token-budget-below-length"]
    assert below[:1] == ([BELOW_05] if trainer_read else [])


@pytest.mark.parametrize(("dynamic", "budgets"), [
    (False, ()), (True, (("trainer.trainer_config.critic.ppo_max_token_len_per_gpu", 65536),))])
def test_the_critics_budgets_are_read_only_where_its_passes_read_one(dynamic: bool, budgets: tuple[Any, ...]):
    config = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 8192},
              "algorithm": {"algorithm_type": "ppo"}, "trainer": {
                  "use_dynamic_bsz": dynamic, "trainer_config": {"critic": {"ppo_max_token_len_per_gpu": 65536}}}}
    assert read_trinity_config(json.dumps(config), "t.yaml", {}).critic_token_budgets == budgets
