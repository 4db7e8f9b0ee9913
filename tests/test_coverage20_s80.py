"""Lines s80 changed that no test ran (helper coverage20): targets that match no module, with exclusions given, are
refused as matching no module (not as every module left out); a LoRA key that references a missing key is refused
where it is read, not as an unset variable; an empty ``model.lora_configs`` (no LoRA) adds no line on full
fine-tuning counted; a LoRA config's ``exclude_modules`` that is no regex is refused with the exclusions' fix."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_loraslips_s80 import PLAIN

import solver
from solver.cluster.search import InterruptedBeforeSearch, before_search
from solver.query import QueryError, given_lora_targets
from solver.rules import API_OPTIONS
from solver.tables.peft_match import EXCLUDED_FORM, every_target_excluded
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
QWEN3 = solver.load_catalog().model("Qwen3-8B")


def test_targets_that_match_nothing_are_refused_as_such_whatever_the_exclusions() -> None:
    # every_target_excluded says nothing where the targets alone match no module: the refusal is theirs
    assert every_target_excluded(".*\\.nothing", ".*\\.v_proj", QWEN3.peft_names, "target_modules 'x'") is None
    assert every_target_excluded(".*\\.(q_proj|v_proj)", ".*\\.v_proj", QWEN3.peft_names, "target_modules 'x'") is None
    assert every_target_excluded(".*\\.(q_proj|v_proj)", ".*_proj", QWEN3.peft_names, "target_modules 'x'") == (
        "leaves out every module target_modules 'x' matches (\"No modules were targeted for adaptation\")")
    with pytest.raises(QueryError) as raised:
        given_lora_targets("nothing_here", 16, QWEN3, "fused", API_OPTIONS, excluded=".*\\.v_proj")
    assert str(raised.value).startswith(
        "lora_targets 'nothing_here' matches no module of Qwen3-8B (model.layers.N.self_attn.{q,k,v,o}_proj, "
        "model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and lm_head): give all-linear")


def test_a_lora_rank_that_references_a_missing_key_is_refused_where_it_is_read(cli: Cli, tmp_path: Path) -> None:
    # Not an unset variable (those refuse the reading in one line): the verdict refuses the config, saying why, and
    # counts Trinity's default rank 32 as it says.
    lora = "  lora_configs: [{lora_rank: '${model.nothing}'}]"
    assert read_trinity_config(PLAIN % lora, "trinity.yaml", {}).lora_rank == 32
    config = tmp_path / "trinity.yaml"
    config.write_text(PLAIN % lora, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check")
    words = " ".join(out.split())
    assert (status, err) == (1, "")
    assert ("refused: model.lora_configs[0].lora_rank: cannot resolve '${model.nothing}': the config has no "
            "model.nothing; every Trinity release refuses the config as it loads it") in words
    assert "the verdict and the plans count LoRA rank 32's states" in words


def test_an_empty_lora_configs_is_refused_without_a_line_on_full_fine_tuning(cli: Cli, tmp_path: Path) -> None:
    # Refused (lora-configs-refused) with no LoRA turned on: full fine-tuning is what it asks, no fallback to say.
    config = tmp_path / "trinity.yaml"
    config.write_text(PLAIN % "  lora_configs: []", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, err) == (1, "")
    assert current["config_problem_codes"] == ["lora-configs-refused"]
    assert current["config_problems"] == [(
        "model.lora_configs is an empty list: Trinity takes its first LoRA config (lora_configs[0]) and so fails to "
        "load the config: give it one LoRA config, or drop it for no LoRA")]


def test_an_exclude_modules_that_is_no_regex_is_refused_with_the_exclusions_fix() -> None:
    lora = "  lora_configs: [{lora_rank: 8, target_modules: all-linear, exclude_modules: '(q'}]"
    reading = read_trinity_config(PLAIN % lora, "trinity.yaml", {})
    refusal = ("model.lora_configs[0].exclude_modules '(q' is no regular expression (missing ), unterminated "
               "subpattern at position 0): peft matches it whole (re.fullmatch) against each module's full name, and "
               f"Trinity fails as it makes the adapter: {EXCLUDED_FORM}")
    assert [(code.value, words) for code, words in zip(reading.note_codes, reading.notes, strict=True)] == [
        ("lora-configs-refused", refusal)]


def test_before_search_raises_ctrl_c_as_interrupted_before_search_and_nothing_else() -> None:
    # Its clause re-raising an InterruptedBeforeSearch as it was is gone (no block nests another): one raised in the
    # block comes out as InterruptedBeforeSearch all the same, Ctrl-C as one, any other error as it is.
    for raised in (KeyboardInterrupt(), InterruptedBeforeSearch()):
        with pytest.raises(InterruptedBeforeSearch) as caught, before_search():
            raise raised
        assert caught.value.__cause__ is None and caught.value.__suppress_context__
    with pytest.raises(ValueError, match="^not Ctrl-C$"), before_search():
        raise ValueError("not Ctrl-C")


def test_the_planner_call_of_a_memory_answer_names_its_exclusions() -> None:
    answer = solver.memory_answer("Qwen3-8B", "H100-80GB", 1, 65536, env=True, lora_rank=64,
                                  lora_exclude_modules=".*\\.mlp\\..*")
    assert solver.memory_text(answer).splitlines()[-1] == (
        '  solver.plan("Qwen3-8B", gpu="H100-80GB", budget_gpus=1, max_model_len=65536, lora_rank=64, '
        'lora_targets="all-linear", lora_exclude_modules=".*\\\\.mlp\\\\..*")')
