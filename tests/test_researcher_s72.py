"""An ML researcher's long-context run, end to end (session 72's fresh-user review): what the answers say of a
Trinity config judged at another length than its own."""

from __future__ import annotations

import json
from pathlib import Path

from solver.api import answer_query, config_query, with_config_verdicts
from solver.tables import load_catalog
from solver.trinity import read_trinity_config

NO_LENGTH = ("algorithm: {algorithm_type: grpo}\n"
             "model:\n  model_path: Qwen/Qwen3-4B\n  max_prompt_tokens: 4096\n  max_response_tokens: 28672\n"
             "cluster:\n  gpu_per_node: 4\n")
SUM = "model.max_model_len is not set: Trinity takes max_prompt_tokens + max_response_tokens = 4096 + 28672 = 32768"


def test_a_config_without_its_length_judged_at_len_says_the_verdict_is_at_len(cli, tmp_path: Path):
    # Trinity takes prompt + response (32768); --len 16384 judges the config there, not at the sum.
    config = tmp_path / "nolen.yaml"
    config.write_text(NO_LENGTH, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "a100-80gb", "--len", "16384", "--json")
    [answer] = json.loads(out)
    assert (status, err, answer["current"]["max_model_len"]) == (0, "", 16384)
    assert f"{SUM}; the verdict is at --len's 16384" in answer["current"]["config_problems"]
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80gb", "--len", "32768", "--json")
    [answer] = json.loads(out)  # --len at the sum: the verdict is at it, as without --len
    assert f"{SUM}, as the verdict does" in answer["current"]["config_problems"]


def test_the_api_words_the_length_note_with_its_keyword():
    config = read_trinity_config(NO_LENGTH, "trinity.yaml", {})
    catalog = load_catalog()
    query = config_query(catalog, config, gpu="a100", max_model_len=16384)
    (answer,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, NO_LENGTH, "trinity.yaml",
                                     {})
    assert answer.current is not None
    assert f"{SUM}; the verdict is at max_model_len's 16384" in answer.current.config_problems


def test_a_config_judged_at_len_is_refused_at_that_length_not_as_written(cli, tmp_path: Path):
    # Its own 32768 loads; at --len 16384 its prompt and response (32768) are too long: refused there alone.
    config = tmp_path / "trinity.yaml"
    config.write_text(NO_LENGTH.replace("  max_prompt_tokens", "  max_model_len: 32768\n  max_prompt_tokens"),
                      encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80gb", "--len", "16384", "--check", "--json")
    [answer] = json.loads(out)
    verdict = answer["current"]["verdict"]
    assert (status, answer["current"]["refused"]) == (1, True)
    assert verdict.startswith("trinity.yaml's settings would run vanilla on 3 trainer GPUs at 16384 tokens (--len; ")
    assert ", but the config judged at this length is refused (the problem that refuses it says why)." in verdict
    status, out, _ = cli("--from-config", str(config), "--gpu", "a100-80gb", "--check", "--json")
    [answer] = json.loads(out)  # at its own length nothing refuses it (vanilla does not train there: exit 1)
    assert (status, answer["current"]["refused"], "refused" in answer["current"]["verdict"]) == (1, False, False)
