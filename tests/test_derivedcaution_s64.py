"""The caution code of a length within a model's native context past the shorter one vLLM derives from its
config.json (review s64, helper derivedcaution): ``past-derived-length``, beside the words the plan's length row
already says (the text says them once), in `solve --json`, `solve memory --json` and the reference's reading of the
words; none within that length, nor for a model without such a key."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from reference import _caution_code

ROOT = Path(__file__).resolve().parent.parent
MY_MODEL = ROOT / "docs" / "examples" / "my-model"
"""Mistral-7B-v0.1's config.json: ``max_position_embeddings`` 32768 and no smaller length key."""

Cli = Callable[..., tuple[int, str, str]]

PAST_SEQ_LENGTH = ("vLLM's rollout refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, past the 8192 it derives "
                   "from the model's config: its seq_length of 8192, the smallest of its length keys")


@pytest.fixture(autouse=True)
def _no_long_length_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_ALLOW_LONG_MAX_MODEL_LEN", raising=False)


def _keyed(tmp_path: Path, **keys: object) -> str:
    """A folder with Mistral-7B-v0.1's config.json and `keys` beside its own."""
    config = json.loads((MY_MODEL / "config.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps({**config, **keys}), encoding="utf-8")
    return str(tmp_path)


def _plan(cli: Cli, folder: str, length: str) -> dict[str, list[str]]:
    status, out, err = cli("--model-config", folder, "--gpu", "h100", "--gpus", "4", "--len", length, "--json")
    assert status == 0, err
    (answer,) = json.loads(out)
    plan = answer["plans"][0]
    return {"cautions": plan["cautions"], "caution_codes": plan["caution_codes"]}


def test_a_plan_past_a_smaller_length_key_has_its_caution_code(cli: Cli, tmp_path: Path):
    assert _plan(cli, _keyed(tmp_path, seq_length=8192), "16k") == {
        "cautions": [PAST_SEQ_LENGTH], "caution_codes": ["past-derived-length"]}


def test_a_plan_within_the_smaller_length_key_has_none(cli: Cli, tmp_path: Path):
    assert _plan(cli, _keyed(tmp_path, seq_length=8192), "8k") == {"cautions": [], "caution_codes": []}


@pytest.mark.parametrize("keys", [{}, {"seq_length": 65536}], ids=["no smaller key", "a longer key"])
def test_a_model_without_a_smaller_length_key_has_none(cli: Cli, tmp_path: Path, keys: dict[str, int]):
    assert _plan(cli, _keyed(tmp_path, **keys), "16k") == {"cautions": [], "caution_codes": []}


def test_the_text_says_it_once_beside_the_length(cli: Cli, tmp_path: Path):
    asked = ("--model-config", _keyed(tmp_path, seq_length=8192), "--gpu", "h100", "--gpus", "4", "--len", "16k")
    status, out, _ = cli(*asked)
    flat = " ".join(out.split())
    assert status == 0 and flat.count(PAST_SEQ_LENGTH) == 1 and f"max_model_len 16384 ({PAST_SEQ_LENGTH})" in flat
    assert not any(line.startswith("caution") for line in out.splitlines())
    # The fragment says it in its own note on vLLM's length, not again as a caution comment.
    status, out, _ = cli(*asked, "--emit", "trinity")
    assert status == 0 and "# vLLM's rollout refuses it" not in out
    assert ("# vLLM (the explorer's rollout) derives a longest max_model_len of 8192 from the model's config.json\n"
            "# and refuses a longer one unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set (before Ray starts).\n") in out


def test_a_breakdown_past_a_smaller_length_key_has_its_caution_code(cli: Cli, tmp_path: Path):
    asked = ("memory", "--model-config", _keyed(tmp_path, seq_length=8192), "--gpu", "h100", "--gpus", "4")
    status, out, _ = cli(*asked, "--len", "16k", "--json")
    estimate = json.loads(out)
    assert status == 0 and (estimate["cautions"], estimate["caution_codes"]) == (
        [PAST_SEQ_LENGTH], ["past-derived-length"])
    status, out, _ = cli(*asked, "--len", "16k")
    assert status == 0 and " ".join(out.split()).count(f"caution: {PAST_SEQ_LENGTH}") == 1
    status, out, _ = cli(*asked, "--len", "8k", "--json")
    assert status == 0 and json.loads(out)["caution_codes"] == []


def test_the_reference_reads_the_words_as_the_code():
    assert _caution_code(PAST_SEQ_LENGTH) == "past-derived-length"
    own = ("beyond the native 131072, which Llama-3.1-8B's own llama3 RoPE scaling provides: no YaRN written; vLLM's "
           "rollout refuses it, past the 131072 it derives from the model's config, unless "
           "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; check the model handles it")
    assert _caution_code(own) == "past-native-on-own-scaling"
