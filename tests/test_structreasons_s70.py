"""No-plan reasons carry their caution codes as data (`ReasonWords`): the one-GPU caution's code is set where
`Plan.cautioned` says the caution beside a plan, travels with the words as they are joined, and a result's
``reason_caution_codes`` is read from that data (and, read back from JSON, from that key, validated), never from the
reason's words: words that merely contain the caution's phrase carry no code."""

from __future__ import annotations

import pydantic
import pytest

import solver
from solver.results import SINGLE_GPU_CAUTION_SHORT, CautionCode, ReasonWords, Unplaced

SINGLE = CautionCode.SINGLE_GPU_ADVISED_AGAINST
CAUTIONED = ReasonWords(f"Env + Offload on 1 GPU (documented; {SINGLE_GPU_CAUTION_SHORT})", frozenset({SINGLE}))


@pytest.fixture(scope="module")
def one_a100() -> solver.Answer:
    """Qwen3-8B at 32768 tokens within one A100 80GB: no plan, and a reason naming plans on one GPU, cautioned."""
    (answer,) = solver.plan("8B", gpu="a100-80gb", budget_gpus=1, max_model_len=32768)
    return answer


def test_words_joined_keep_the_codes_of_each_part_and_plain_words_add_none():
    joined = "p: " + CAUTIONED + "; and more"
    assert (joined.text, joined.caution_codes) == (
        f"p: Env + Offload on 1 GPU (documented; {SINGLE_GPU_CAUTION_SHORT}); and more", frozenset({SINGLE}))
    assert ReasonWords.joined("; ", ["a", CAUTIONED, ReasonWords("b")]) == ReasonWords(
        f"a; {CAUTIONED.text}; b", frozenset({SINGLE}))
    assert ReasonWords.joined("; ", ["a", "b"]).caution_codes == frozenset()
    assert (bool(ReasonWords()), ReasonWords().shown_codes, CAUTIONED.shown_codes) == (False, None, (SINGLE,))


def test_words_refuse_an_f_string_which_would_drop_their_codes():
    with pytest.raises(TypeError, match="would drop their caution codes"):
        f"p: {CAUTIONED}"


def test_words_that_merely_contain_the_phrase_carry_no_code(one_a100: solver.Answer):
    assert ReasonWords(f"a plan ({SINGLE_GPU_CAUTION_SHORT})").caution_codes == frozenset()
    left_out = Unplaced(job="x", reason=f"p: a plan ({SINGLE_GPU_CAUTION_SHORT})")
    assert left_out.reason_caution_codes is None and "reason_caution_codes" not in left_out.model_dump(
        mode="json", exclude_none=True)
    reworded = one_a100.with_reason(ReasonWords(one_a100.reason or ""))
    assert (reworded.reason, reworded.reason_caution_codes) == (one_a100.reason, None)
    assert "reason_caution_codes" not in reworded.as_json()


def test_a_plan_on_one_a100_says_the_caution_with_its_code_and_one_without_it_none(one_a100: solver.Answer):
    cautioned = one_a100.nearest
    assert cautioned is not None and cautioned.single_gpu_advised_against
    said = ReasonWords(f"documented; {SINGLE_GPU_CAUTION_SHORT}", frozenset({SINGLE}))
    assert cautioned.cautioned("documented") == said
    assert cautioned.with_single_gpu_caution("documented") == f"documented; {SINGLE_GPU_CAUTION_SHORT}"
    (h20,) = solver.plan("8B", gpu="h20", budget_gpus=1, max_model_len=8192)
    assert h20.best is not None and h20.best.cautioned("documented") == ReasonWords("documented")
    assert (one_a100.reason_caution_codes, h20.reason_caution_codes) == ((SINGLE,), None)


def test_codes_read_back_come_from_their_key_validated(one_a100: solver.Answer):
    printed = one_a100.as_json()
    assert solver.Answer.model_validate(printed).reason_words == one_a100.reason_words
    for given, said in ((["single-gpu-advised-against"] * 2, "give null or a list of distinct caution codes"),
                        ([], "give null or a list"), (["single-gpu"], "give null or a list")):
        with pytest.raises(pydantic.ValidationError, match=f"reason_caution_codes is .*: {said}"):
            solver.Answer.model_validate({**printed, "reason_caution_codes": given})
    (planned,) = solver.plan("8B", gpu="a100-80gb", budget_gpus=2, max_model_len=8192)
    with pytest.raises(pydantic.ValidationError, match="but there is no reason to say them"):
        solver.Answer.model_validate({**planned.as_json(), "reason_caution_codes": ["single-gpu-advised-against"]})
