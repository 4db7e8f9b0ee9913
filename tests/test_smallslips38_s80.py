"""Small words left by session 80's reviews (helper smallslips38): a capped plan's token budget says whose cap it is
(``capped by --token-budget 8192``, ``capped by the config's own max_token_len_per_gpu``:
`Answer.token_budget_cap_source`) where it said ``the cap asked for (or the config's own budget)``; the layout
refusal's release and layout share one bracket (``Trinity 0.5.1.post1 (read as 0.5.1; routed experts ...)``); targets
or exclusions without LoRA ask for a LoRA rank above 0, true beside ``--lora-rank 0`` too (was ``give --lora-rank
too``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_keepbudget_s80 import H20_CONFIG, ROLES_CAP, Cli

import solver
from solver.query import token_cap_words
from solver.rules import API_OPTIONS, COMMAND_OPTIONS
from solver.tables import QueryError

ASKED = ("--model", "qwen3-8b", "--gpu", "h100", "--len", "32768", "--token-budget", "8192", "--top", "2")


def test_a_cap_given_is_named_as_the_option() -> None:
    assert token_cap_words(8192, None, COMMAND_OPTIONS) == "capped by --token-budget 8192"
    assert token_cap_words(8192, None, API_OPTIONS) == "capped by token_budget=8192"
    assert (token_cap_words(8192, "the config's own max_token_len_per_gpu", API_OPTIONS)
            == "capped by the config's own max_token_len_per_gpu")
    # a plan's fragment is written without its answer, which alone knows the source: it names either
    assert (token_cap_words(8192, None, None)
            == "capped by --token-budget 8192 or the config's own max_token_len_per_gpu")


def test_the_budget_line_and_the_note_name_token_budget_n(cli: Cli) -> None:
    status, out, err = cli(*ASKED)
    said = " ".join(out.split())
    assert status == 0, err
    assert ("token budget max_token_len_per_gpu = 8192 (capped by --token-budget 8192, below Trinity's default, "
            "ceil(2 x 32768 / SP 4) = 16384; at least ceil(32768 / 4) = 8192;") in said
    assert ("* trainer.max_token_len_per_gpu below Trinity's default ceil(2 x L / SP): capped by --token-budget 8192, "
            "or less where that does not fit") in said
    assert "the cap asked for" not in said
    (answer,) = json.loads(cli(*ASKED, "--json")[1])
    assert answer["token_budget_cap"] == 8192 and "token_budget_cap_source" not in answer


def test_the_budget_line_names_the_configs_own_budget(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(H20_CONFIG)
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--top", "2")
    said = " ".join(out.split())
    assert status == 0, err
    assert (f"token budget max_token_len_per_gpu = 32768 (capped by {ROLES_CAP}, below "
            "Trinity's default, ceil(2 x 32768 / SP 1) = 65536;") in said
    assert (f"ceil(2 x L / SP): capped by {ROLES_CAP}, or less where that does not "
            "fit") in said
    (answer,) = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--json")[1])
    assert (answer["token_budget_cap"], answer["token_budget_cap_source"]) == (32768, ROLES_CAP)
    # the option given beside the config is the cap's source
    (given,) = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--token-budget", "16384", "--json")[1])
    assert given["token_budget_cap"] == 16384 and "token_budget_cap_source" not in given
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--emit", "trinity")
    assert status == 0
    comments = " ".join(line.strip().removeprefix("# ") for line in out.splitlines() if line.strip().startswith("#"))
    assert (f"below Trinity's default ceil(2 * 32768 / 1): capped by {ROLES_CAP}; at least ceil(32768 / 1)"
            ) in comments  # the answer's source, as the budget line (lorarule_s81: either)


def test_the_api_names_its_keyword() -> None:
    answers = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, token_budget=8192, top=2)
    assert [(answer.token_budget_cap, answer.token_budget_cap_source) for answer in answers] == [(8192, None)]
    said = " ".join(solver.answers_text(answers).split())
    assert "(capped by token_budget=8192, below Trinity's default, ceil(2 x 32768 / SP 4) = 16384;" in said
    assert "ceil(2 x L / SP): capped by token_budget=8192, or less where that does not fit" in said


def test_the_layout_refusal_puts_the_release_and_layout_in_one_bracket() -> None:
    (answer,) = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=8, max_model_len=8192, trinity_version="0.5.1")
    text = answer.model_dump_json().replace('"trinity_version":"0.5.1"', '"trinity_version":"0.5.1.post1"')
    with pytest.raises(QueryError) as raised:
        solver.trinity_config(solver.Answer.model_validate_json(text), version="0.6")
    assert str(raised.value).startswith(
        "the answer's plan was counted for Trinity 0.5.1.post1 (read as 0.5.1; routed experts counted separate, as "
        "Trinity 0.5.1's transformers 4 holds them): its memory figures do not hold for Trinity 0.6, ")
    # a release named as given keeps its own bracket
    (plain,) = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=8, max_model_len=8192, trinity_version="0.5.1")
    with pytest.raises(QueryError) as refused:
        solver.trinity_config(plain, version="0.6")
    assert str(refused.value).startswith("the answer's plan was counted for Trinity 0.5.1 (routed experts counted "
                                         "separate, as Trinity 0.5.1's transformers 4 holds them): ")


def test_exclusions_beside_lora_rank_0_ask_for_a_rank_above_0(cli: Cli) -> None:
    status, out, err = cli("--model", "8B", "--gpu", "h100", "--len", "16384", "--lora-rank", "0",
                           "--lora-exclude", ".*\\.v_proj")
    assert (status, out, err) == (2, "", ("solve: error: --lora-exclude '.*\\.v_proj' without LoRA: the exclusions "
                                          "are a LoRA adapter's; give a --lora-rank above 0\n"))
    with pytest.raises(QueryError) as raised:
        solver.plan("Qwen3-8B", gpu="h100", max_model_len=16384, lora_rank=0, lora_exclude_modules=".*\\.v_proj")
    assert str(raised.value) == ("lora_exclude_modules '.*\\.v_proj' without LoRA: the exclusions are a LoRA "
                                 "adapter's; give a lora_rank above 0")
    with pytest.raises(QueryError) as targets:
        solver.plan("Qwen3-8B", gpu="h100", max_model_len=16384, lora_rank=0, lora_targets="q_proj")
    assert str(targets.value) == ("lora_targets 'q_proj' without LoRA: the targets are a LoRA adapter's; give a "
                                  "lora_rank above 0")
