"""A length past what the model is known to handle says so once (session 67): the summary's ``max_model_len`` row
names ``past the validated 131072`` (or ``past the native N``) first, then the YaRN factor and what is validated, once
each and without parentheses inside parentheses; what to do is said once, by the apply lines' comment below, which is
pasted alone (session 69); the caution said alone (JSON) keeps its words."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import qwen3_8b_checkpoint

CHECK = "check the model's quality at this length"
CARDS = "Qwen's model cards validate a factor of 4 over 32768 positions: 131072 tokens"


def deepest_parentheses(text: str) -> int:
    """How deep `text`'s parentheses nest (1 for ``a (b) (c)``)."""
    depth = deepest = 0
    for character in text:
        depth += {"(": 1, ")": -1}.get(character, 0)
        deepest = max(deepest, depth)
    return deepest


def length_row(out: str) -> str:
    """The first ``max_model_len`` row of a summary, its wrapped lines joined."""
    row = out[out.index("\nmax_model_len  ") + 1:].split("\ntoken budget")[0]
    return " ".join(row.split())


@pytest.mark.parametrize(("config", "length", "row"), [
    ({}, "133120", f"133120, past the validated 131072 (YaRN rope scaling, factor 3.25; {CARDS})"),
    ({"max_position_embeddings": 4096}, "20000",
     (f"20000, past the validated 16384 (YaRN rope scaling, factor 4.8828125; {CARDS}; 4 times its native 4096 is "
      "16384)")),
    ({"max_position_embeddings": 131072}, "190000",
     (f"190000, past the native 131072 (YaRN rope scaling, factor 1.4495849609375; {CARDS}, which its native 131072 "
      "already covers)")),
    ({"model_type": "mistral", "max_position_embeddings": 32768}, "65536",
     ("65536, past the native 32768 (YaRN rope scaling, factor 2.0; rft-solver knows of no validation of YaRN on a "
      "model that is not Qwen's)")),
])
def test_the_length_row_says_past_the_known_length_once_without_nested_parentheses(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, config: dict[str, object], length: str, row: str):
    folder = qwen3_8b_checkpoint(tmp_path / "my-model", **config)
    flags = ("--model-config", str(folder), "--gpu", "h200", "--gpus", "8", "--len", length)
    status, out, err = cli(*flags)
    shown = length_row(out)
    assert (status, err, shown) == (0, "", f"max_model_len {row}")
    assert (shown.count("past the"), shown.count("validated for"), deepest_parentheses(shown)) == (1, 0, 1)
    past = row.split(", ")[1].split(" (")[0]  # past the validated 131072
    assert (" ".join(out.split()).count(CHECK), f"\n# max_model_len {past}: {CHECK}, or plan --len " in out) == (
        1, True)
    status, out, _ = cli(*flags, "--json")
    [caution] = [words for words in json.loads(out)[0]["plans"][0]["cautions"] if words.startswith("YaRN factor")]
    assert caution.endswith(f": {CHECK}") and (CARDS in caution) == (config.get("model_type") != "mistral")
