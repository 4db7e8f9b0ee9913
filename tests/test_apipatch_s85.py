"""The Trinity config API (apipatch, s85): `patch_trinity_config` refuses a plan made for another catalogue model than
the config trains, as ``--write`` refuses a ``--model`` of another; results read back from their JSON compare equal
as docs/api.md says (their JSON, and their own round trip), not to the originals, whose GiB the JSON rounds; the
functions that say what the patch does refuse arguments of the wrong type in one line, as the patch does, where they
raised ``AttributeError`` or ``TypeError``."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import solver
from solver.render import answers_json
from solver.results import Answer, Plan
from solver.rules import COMMAND_OPTIONS
from solver.tables import Model, QueryError
from solver.trinity import (
    aliases_written_out,
    anchored_keys,
    config_key_changes,
    config_keys_changed,
    config_keys_kept,
    kept_interpolated_keys,
    kept_interpolations,
    patch_trinity_config,
    patched_trinity_config,
    rope_scaling_written,
)

API_DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
CONFIG = "model:\n  model_path: MODEL\n  max_model_len: 4096\ncluster:\n  node_num: 1\n  gpu_per_node: 4\n" \
         "mode: train\n"
"""A config whose cluster gives the trainer the 4 GPUs of `qwen3_4b`'s plan; MODEL its model path."""


@cache
def qwen3_4b() -> tuple[Answer, Plan, Model]:
    """Qwen3-4B on exactly 4 A100s at 8192 tokens: its answer, best plan and model."""
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=4, exact=True)
    assert answer.best is not None
    return answer, answer.best, solver.load_catalog().model("4B")


def _refusal(trained: str, planned: str) -> str:
    return (f"config: the plan is {planned}'s (model), but the config trains {trained} (model.model_path), which "
            f"solver.trinity.patch_trinity_config keeps: it would give {trained} another model's plan; give it a plan "
            f"of {trained}, with that model")


@pytest.mark.parametrize("patch", [patch_trinity_config, patched_trinity_config])
def test_the_patch_refuses_a_plan_of_another_catalogue_model(patch: Any) -> None:
    _, plan, model = qwen3_4b()
    with pytest.raises(QueryError) as refused:
        patch(CONFIG.replace("MODEL", "Qwen/Qwen3-14B"), plan, model)
    assert str(refused.value) == _refusal("Qwen3-14B", "Qwen3-4B")
    # the model path as the environment gives it, as the check reads the config
    from_environment = CONFIG.replace("MODEL", "${oc.env:MODEL_PATH,Qwen/Qwen3-4B}")
    with pytest.raises(QueryError) as refused:
        patch(from_environment, plan, model, environ={"MODEL_PATH": "/models/Qwen3-8B/"})
    assert str(refused.value) == _refusal("Qwen3-8B", "Qwen3-4B")
    # the model given is the one the plan is taken to be for: Qwen3-14B's model beside a config of Qwen3-4B
    with pytest.raises(QueryError) as refused:
        patch(CONFIG.replace("MODEL", "Qwen/Qwen3-4B"), plan, solver.load_catalog().model("14B"))
    assert str(refused.value) == _refusal("Qwen3-4B", "Qwen3-14B")


def test_the_patch_takes_the_plan_of_the_configs_own_model_or_a_path_no_catalogue_model_names() -> None:
    _, plan, model = qwen3_4b()
    trainer = "trainer:\n  ulysses_sequence_parallel_size: 1\n  max_token_len_per_gpu: 16384\n"
    for path in ("Qwen/Qwen3-4B", "/models/qwen3-4b/", "${oc.env:MODEL_PATH,Qwen/Qwen3-4B}", "/ckpt/my-run"):
        config = CONFIG.replace("MODEL", path)
        assert patch_trinity_config(config, plan, model) == config.replace("4096", "8192") + trainer, path
    # the functions that say what the patch does take the plan they are given (solve --from-config --model M --json)
    other = CONFIG.replace("MODEL", "Qwen/Qwen3-14B")
    assert config_keys_changed(other, plan, model) == []
    assert [change.key for change in config_key_changes(other, plan, model)] == [
        "model.max_model_len", "trainer.ulysses_sequence_parallel_size", "trainer.max_token_len_per_gpu"]


def _round_trip(result: BaseModel) -> BaseModel:
    return type(result).model_validate_json(result.model_dump_json())


def test_results_read_back_from_json_compare_as_the_docs_say() -> None:
    answer, plan, _ = qwen3_4b()
    memory = solver.memory_answer("8B", "h100", 8, 131072, sp=8, env=True)
    (gpu_map,) = solver.map_plans("8B", gpu="h100", by="len", gpus_up_to=2)
    for result in (plan, answer, memory, gpu_map):
        rebuilt = _round_trip(result)
        # the JSON rounds the memory model's GiB: the rebuilt result holds them rounded, so it differs
        assert rebuilt != result, type(result).__name__
        assert rebuilt.model_dump(mode="json") == result.model_dump(mode="json"), type(result).__name__
        assert _round_trip(rebuilt) == rebuilt, type(result).__name__
    rebuilt_plan = _round_trip(plan)
    assert isinstance(rebuilt_plan, Plan)
    assert (rebuilt_plan.memory_gb, rebuilt_plan.headroom_gb) == (round(plan.memory_gb, 2), round(plan.headroom_gb, 2))
    assert rebuilt_plan.memory_gb != plan.memory_gb
    assert isinstance(answer, Answer) and _round_trip(answer).model_dump(mode="json") == answer.as_json()
    documented = " ".join(API_DOC.read_text(encoding="utf-8").split())
    assert ('What compares equal is the JSON: `rebuilt.model_dump(mode="json") == original.model_dump(mode="json")` '
            "(an answer's `as_json()`), and a result read back is equal to its own round trip "
            "(`solver.Plan.model_validate_json(rebuilt.model_dump_json()) == rebuilt`)") in documented


DESCRIBERS = [config_keys_changed, config_key_changes, config_keys_kept, rope_scaling_written, kept_interpolations,
              kept_interpolated_keys, aliases_written_out, anchored_keys, patch_trinity_config]


@pytest.mark.parametrize("function", DESCRIBERS, ids=lambda function: function.__name__)
def test_the_functions_that_say_what_the_patch_does_refuse_wrong_types_in_one_line(function: Any) -> None:
    _, plan, model = qwen3_4b()
    config = CONFIG.replace("MODEL", "Qwen/Qwen3-4B")
    for arguments, keywords, words in (
            ((None, plan, model), {}, "text must be a str, got None"),
            ((config.encode(), plan, model), {}, "text must be a str, got b'model:"),
            ((config, "plan", model), {}, "plan must be a Plan, got 'plan'"),
            ((config, plan, "4B"), {}, "model must be a Model, got '4B'"),
            ((config, plan, model), {"name": 3}, "name must be a str, got 3"),
            ((config, plan, model), {"environ": [("A", "1")]}, "environ must be a Mapping or None, got [('A', '1')]"),
            ((config, plan, model), {"version": "0.7"}, "version")):
        with pytest.raises(QueryError) as refused:
            function(*arguments, **keywords)
        assert str(refused.value).startswith(words) and "\n" not in str(refused.value), (arguments, keywords)


UNREAD = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192}\nmode: both\nalgorithm: {algorithm_type: grpo}\n"
          "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}"
          "\ntrainer: {use_dynamic_bsz: '${oc.env:DYN}', ulysses_sequence_parallel_size: '${oc.env:SP,4}', "
          "trainer_config: {actor_rollout_ref: {actor: {ppo_micro_batch_size_per_gpu: '${oc.env:MB}'}}}}\n")
"""unread87's config (tests/test_cli_trinity.py): 6 trainer GPUs, keys that decide the tokens per GPU read DYN and MB,
and its SP an interpolation (4 here) that the plan's 1 replaces."""
CONFIG_CASES = {
    "passes": UNREAD.split("trainer:")[0],
    "fails": UNREAD.split("trainer:")[0].replace("8192}", "32768}"),
    "unread": UNREAD,
    "refused": UNREAD.split("trainer:")[0].replace("8192}", "8192, max_prompt_tokens: 4096, max_response_tokens: 8192}"),
}
"""A config whose own settings train on 6 H100s, one that does not fit there, one whose verdict is unknown (`UNREAD`,
with DYN and MB unset) and one that Trinity refuses (prompt and response over the length)."""


@pytest.mark.parametrize("case", list(CONFIG_CASES))
def test_check_config_gives_what_check_json_prints_and_its_exit_status(cli, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       case: str) -> None:
    # api88: judging a config took five calls (read, catalogue, config_query, answer_query, with_config_verdicts) and
    # left out apply, config_keys_changed and --check's pass or fail; check_config is one, on the command's own path
    for variable in ("DYN", "SP", "MB"):
        monkeypatch.delenv(variable, raising=False)
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG_CASES[case], encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    judged = solver.check_config(config, gpu="h100", option_names=COMMAND_OPTIONS)
    assert answers_json(judged.answers) + "\n" == out  # byte for byte, apply and config_keys_changed too
    assert (judged.config, judged.passes, status) == ("trinity.yaml", case == "passes", 0 if case == "passes" else 1)
    current = judged.answers[0].current
    assert current is not None
    expected = {"passes": (True, (), False), "fails": (False, (), False),
                # its SP 4 on its own 6 trainer GPUs: refused as Trinity loads the config (sp-divides-gpus, s89)
                "unread": (False, ("trainer.use_dynamic_bsz",
                                   "trainer.trainer_config.actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu"), True),
                "refused": (True, (), True)}[case]
    assert (current.trains, current.unread_keys, current.refused) == expected


def test_check_config_judges_text_in_the_apis_words_and_refuses_bad_keywords_in_one_line() -> None:
    judged = solver.check_config("mine.yaml", text=CONFIG_CASES["refused"], gpu="h100", environ={})
    (problem,) = judged.answers[0].current.config_problems if judged.answers[0].current else ()
    assert judged.config == "mine.yaml" and not judged.passes and problem.endswith("(max_model_len=12288)")
    for keywords, words in (({"gpu": ""}, "an empty name in gpu=''"), ({"trinity_version": "0.7"}, "trinity_version"),
                            ({"text": 3}, "text must be"), ({"max_model_len": 0}, "max_model_len must be")):
        with pytest.raises(QueryError, match=re.escape(words)) as refused:
            solver.check_config("mine.yaml", **{"text": CONFIG_CASES["passes"], **keywords})
        assert "\n" not in str(refused.value)
    with pytest.raises(QueryError) as refused:
        solver.check_config("mine.yaml", text="model: {model_path: Qwen/Qwen3-8B}\n", gpu="h100", environ={})
    assert str(refused.value) == ("check_config needs a length to judge mine.yaml at: it sets no model.max_model_len "
                                  "(nor max_prompt_tokens and max_response_tokens); give max_model_len=L")


@pytest.mark.parametrize(("config", "words"), [
    (CONFIG_CASES["passes"], "config must be a path, not a file's text: got several lines ('model:"),
    ("", "config must be a non-empty path, got ''"),
    ("mine\0.yaml", "config must be a path the file system can name, got 'mine\\x00.yaml': a NUL character")])
def test_check_config_refuses_a_config_no_file_has_as_its_name_in_one_line(config: str, words: str) -> None:
    # A notebook user passes the config's text where its path goes: told to pass it as text=, not a TableError
    # quoting the whole text ("cannot read: No such file or directory"); "" read as the folder "." and a NUL
    # character raised a bare ValueError.
    with pytest.raises(QueryError) as refused:
        solver.check_config(config, gpu="h100", environ={})
    assert str(refused.value).startswith(words) and "\n" not in str(refused.value)
    assert str(refused.value).endswith("for a config's text, pass it as text=, and its file's name as config") == (
        "\n" in config)


def test_patched_trinity_config_carries_writes_notes_on_unread_variables_and_replaced_interpolations(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # api88: --write noted both (unread87); the patch's result said neither, so the API's caller could not tell
    judged = solver.check_config("trinity.yaml", text=UNREAD, gpu="h100", environ={})
    best = judged.answers[0].best
    # mutants48: without environ, check_config reads this process's environment, as the command its shell's
    for variable, value in (("DYN", "true"), ("MB", "1"), ("SP", "1")):
        monkeypatch.setenv(variable, value)
    current = solver.check_config("trinity.yaml", text=UNREAD, gpu="h100").answers[0].current
    assert current is not None and (current.unread_keys, current.trains) == ((), True)
    assert best is not None and best.sp == 1
    patched = patched_trinity_config(UNREAD, best, solver.load_catalog().model("8B"), name="trinity.yaml", environ={})
    actor = "trainer.trainer_config.actor_rollout_ref.actor"
    assert patched.unread_note == (
        f"whether it trains depends on trainer.use_dynamic_bsz and {actor}.ppo_micro_batch_size_per_gpu, which cannot "
        "be read here: set DYN and MB as the run will, then check it (its header's command)")
    assert patched.replaced_notes == ((
        "trainer.ulysses_sequence_parallel_size ${oc.env:SP,4} replaced by the plan's 1: the interpolation gives "
        "another value here, or none, and the patch writes the value the plan holds for"),)
    read = patched_trinity_config(UNREAD, best, solver.load_catalog().model("8B"), name="trinity.yaml",
                                  environ={"DYN": "true", "MB": "1", "SP": "1"})  # as the run will: nothing to say
    assert (read.unread_note, read.replaced_notes) == (None, ())


def test_check_config_names_no_patch_in_its_fixes_where_the_patch_does_not_take_the_config() -> None:
    # mutants48: planned as another catalogue model than its model_path's, the patch does not take the config
    # (patch_takes): the fixes say what to set, not that patch_trinity_config does, as --check without --write
    text = CONFIG_CASES["passes"] + ("trainer: {trainer_config: {actor_rollout_ref: {ref: {fsdp_config: {"
                                     "ulysses_sequence_parallel_size: 2}}}}}\n")
    current = solver.check_config("trinity.yaml", text=text, gpu="h100", model="4B", environ={}).answers[0].current
    assert current is not None and [code.value for code in current.config_problem_codes] == ["role-sp-differs"]
    assert current.config_problems[0].endswith("; the verdict is at SP 1: set them alike")
    # the read config's own lines too (Trinity 0.5 runs the trainer at the actor's SP)
    text = CONFIG_CASES["passes"] + ("trainer: {trainer_config: {actor_rollout_ref: {actor: {"
                                     "ulysses_sequence_parallel_size: 2}}}}\n")
    current = solver.check_config("trinity.yaml", text=text, gpu="h100", model="4B", trinity_version="0.5",
                                  environ={}).answers[0].current
    assert current is not None and current.config_problems[0].endswith("so the verdict is at SP 2: set them alike")


def test_the_unread_note_counts_a_whole_batch_size_over_the_plans_data_parallel_ranks() -> None:
    # mutants48: the ref's deprecated size for the whole batch, 8, is 8 sequences per GPU on the one data-parallel rank
    # of SP 8 on 8 GPUs, so the unreadable flag decides whether they share a micro-batch: the note names it (over 8
    # GPUs, not ranks, it would be 1 sequence, and no note)
    best = solver.plan("8B", gpu="h100", max_model_len=131072, budget_gpus=8)[0].best
    assert best is not None and (best.gpus, best.sp) == (8, 8)
    text = ("model: {model_path: Qwen/Qwen3-8B, max_model_len: 131072}\nalgorithm: {algorithm_type: grpo}\nmode: train\n"
            "cluster: {node_num: 1, gpu_per_node: 8}\nbuffer: {train_batch_size: 8}\ntrainer: {use_dynamic_bsz: "
            "'${oc.env:DYN}', trainer_config: {actor_rollout_ref: {ref: {log_prob_micro_batch_size: 8}}}}\n")
    patched = patched_trinity_config(text, best, solver.load_catalog().model("8B"), name="trinity.yaml", environ={})
    assert patched.unread_note == ("whether it trains depends on trainer.use_dynamic_bsz, which cannot be read here: "
                                   "set DYN as the run will, then check it (its header's command)")
