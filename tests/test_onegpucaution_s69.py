"""The guide's one-GPU caution wherever a plan on one A100 80GB (or a GPU of no more memory) is shown: the no-plan
reasons' plans carry it in short (`Plan.evidence_and_single_gpu`, `Plan.with_single_gpu_caution`), their JSON says so
in `reason_caution_codes`, and `solve map` marks such cells ``†`` with one legend line. The H20's 96 GB get none:
Trinity-RFT's guide advises against one A100 alone (for 4B parameters or more, or more than 20K tokens)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pydantic
import pytest

import solver

Cli = Callable[..., tuple[int, str, str]]

SHORT = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"
CODES = ["single-gpu-advised-against"]


def _answer(cli: Cli, *argv: str) -> dict[str, object]:
    """The one answer ``solve ARGV --json`` prints, which has no plan (exit status 1)."""
    status, out, _ = cli(*argv, "--json")
    assert status == 1
    (answer,) = json.loads(out)
    return answer  # type: ignore[no-any-return]


def test_the_longest_and_the_lowered_budget_on_one_a100_carry_the_caution_and_its_code(cli: Cli):
    answer = _answer(cli, "--gpu", "a100-80gb", "--model", "8B", "--len", "32768", "--gpus", "1")
    assert answer["reason"] == (
        "32768 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-8B on A100-80GB "
        f"within 1 GPU: the longest is 24576 (Env + Offload on 1 GPU, documented; {SHORT}); --token-budget auto trains "
        f"32768 tokens: Env + Offload on 1 GPU with max_token_len_per_gpu = 49152 (estimated; {SHORT})")
    assert answer["reason_caution_codes"] == CODES
    assert "single-gpu-advised-against" in answer["nearest"]["caution_codes"]  # type: ignore[index]


def test_one_h20_is_not_cautioned_and_its_json_has_no_reason_caution_codes(cli: Cli):
    answer = _answer(cli, "--gpu", "h20", "--model", "8B", "--len", "40960", "--gpus", "1")
    assert answer["reason"] == (
        "40960 tokens is beyond what the tables and the memory model's estimates allow for Qwen3-8B on H20-96GB within "
        "1 GPU: the longest is 28672 (Env + Offload on 1 GPU, documented); --token-budget auto trains 40960 tokens: "
        "Env + Offload on 1 GPU with max_token_len_per_gpu = 57344 (estimated)")
    assert "reason_caution_codes" not in answer


def test_the_estimated_plan_under_no_estimate_carries_it_after_its_lowered_budget(cli: Cli):
    # The plan on two GPUs between them carries none.
    answer = _answer(cli, "--gpu", "a100-80gb", "--model", "8B", "--len", "40960", "--gpus", "1", "--no-estimate")
    assert answer["reason"] == (
        "40960 tokens is beyond what the tables allow for Qwen3-8B on A100-80GB within 1 GPU: the longest is 24576 "
        f"(Env + Offload on 1 GPU, documented; {SHORT}); more trainer GPUs train 40960 tokens: Env + Offload + SP=2 on "
        "2 GPUs (documented); the memory model estimates a plan, Env + Offload on 1 GPU at 40960 tokens with a lowered "
        f"max_token_len_per_gpu of 49152 ({SHORT}): drop --no-estimate and add --token-budget auto")
    assert answer["reason_caution_codes"] == CODES


@pytest.mark.parametrize(("argv", "reason"), [
    (("--model", "8B", "--host-ram", "64"),
     ("nothing in the tables and the memory model's estimates for Qwen3-8B on A100-80GB within 1 GPU trains with "
      f"--host-ram 64 GiB; without --host-ram, Env + Offload on 1 GPU trains it (8192 tokens; {SHORT}), and with "
      "Offload it needs 183.0 GiB of host memory per node")),
    (("--model", "14B", "--no-offload"),
     ("nothing in the tables and the memory model's estimates for Qwen3-14B on A100-80GB within 1 GPU trains with "
      f"--no-offload (without --no-offload: Env + Offload on 1 GPU trains it, documented; {SHORT})")),
])
def test_the_plans_without_a_limit_on_one_a100_carry_it(cli: Cli, argv: tuple[str, ...], reason: str):
    answer = _answer(cli, "--gpu", "a100-80gb", "--len", "8192", "--gpus", "1", *argv)
    assert (answer["reason"], answer["reason_caution_codes"]) == (reason, CODES)


def test_the_text_says_it_as_the_json_does(cli: Cli):
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "14B", "--len", "8192", "--gpus", "1", "--no-offload")
    assert status == 1 and " ".join(out.split("\n")[1:3]).endswith(f"trains it, documented; {SHORT})")


def test_an_answer_reads_back_with_its_codes_from_their_key_and_unknown_codes_are_refused():
    # The codes are the key's, not read from the reason's words (s70: reasons carry their codes as data).
    (answer,) = solver.plan("8B", gpu="a100-80gb", budget_gpus=1, max_model_len=32768)
    printed = answer.as_json()
    assert solver.Answer.model_validate_json(json.dumps(printed)).as_json() == printed
    assert solver.Answer.model_validate({**printed, "reason_caution_codes": None}).reason_caution_codes is None
    with pytest.raises(pydantic.ValidationError, match="reason_caution_codes is \\['one-gpu'\\]: give null or a list"):
        solver.Answer.model_validate({**printed, "reason_caution_codes": ["one-gpu"]})


def test_a_map_marks_one_a100_cells_the_guide_advises_against_and_one_h20_s_none(cli: Cli,
                                                                                 monkeypatch: pytest.MonkeyPatch):
    # Qwen3-0.6B on one A100: up to 20480 tokens the guide says nothing (under 4B parameters); past it, each cell has †.
    monkeypatch.setenv("COLUMNS", "120")
    status, out, _ = cli("map", "--gpu", "a100-80gb,h20", "--model", "0.6B", "--by", "len", "--budgets", "1,2")
    a100, h20 = out.split("H20-96GB · ")
    one_gpu = {int(cells[1]): cells[2].strip() for line in a100.splitlines()
               if line.startswith("│") and (cells := line.split("│"))}
    assert status == 0 and [one_gpu[length] for length in (20480, 24576, 28672, 32768)] == ["van@1", "E@1†", "E+O@1†",
                                                                                            "-"]
    assert a100.endswith(f"\n† {SHORT}\n") and a100.count("†") == 3
    assert "†" not in h20 and "E+O@1 " in h20


def test_a_map_whose_one_gpu_column_is_left_out_has_no_legend_line(cli: Cli, monkeypatch: pytest.MonkeyPatch):
    # Past one node, a map shows a few columns: budget 1's, whose cell has †, is left out, and so is the line.
    monkeypatch.setenv("COLUMNS", "120")
    status, out, _ = cli("map", "--gpu", "a100-80gb", "--model", "8B", "--gpus-up-to", "32")
    assert status == 0 and "budgets 1 and 24 to 31: columns left out" in out and "†" not in out
