"""A notebook user's mistakes (session 58): plan()'s tuple passed to trinity_config, a length written as text
('131072', where '128K' is read as --len reads it) or as a float, a list of GPU types or models where one is asked
for, and nvidia-smi's MiB given as GB;
each error says what to pass."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import solver

LISTED = ", which lists 2 where one is asked for: give one, and ask for each in turn"


@pytest.mark.parametrize("make", [solver.trinity_config, solver.trinity_settings])
def test_a_fragment_of_plans_tuple_says_to_pass_one_answer(make: Callable[..., Any]):
    answers = solver.plan("14B", max_model_len=32768, budget_gpus=8)
    with pytest.raises(solver.QueryError) as caught:
        make(answers)
    assert str(caught.value) == ("answer must be an Answer, got a tuple of 2 Answers (plan gives one per GPU type): "
                                 "pass one, such as answers[0] (A100-80GB's)")
    with pytest.raises(solver.QueryError) as caught:
        make(answers[:1])
    assert str(caught.value).startswith("answer must be an Answer, got a tuple of 1 Answer (plan gives")
    assert make(answers[0]) == make(answers[0])  # one Answer still makes its fragment


@pytest.mark.parametrize(("length", "hint"), [
    ("131072", " (a str: pass 131072)"), (131072.0, " (a float: pass 131072)"), (131072.5, ""),
    ("128 thousand", " (tokens, or thousands of 1024: 32768 or 32k)"),
    ("１２８", " (tokens, or thousands of 1024: 32768 or 32k)")])  # "128K" is 131072, as --len's: test_apileft_s79
def test_a_length_written_otherwise_is_told_the_number_to_pass(length: object, hint: str):
    with pytest.raises(solver.QueryError) as caught:
        solver.plan("14B", gpu="h100", max_model_len=length, budget_gpus=8)  # type: ignore[arg-type]
    assert str(caught.value) == f"max_model_len must be a whole number or None, got {length!r}{hint}"
    with pytest.raises(solver.QueryError) as caught:
        solver.estimate_memory("14B", "h100", 8, length, sp=8)  # type: ignore[arg-type]
    assert str(caught.value) == f"max_model_len must be a whole number, got {length!r}{hint}"


def test_a_count_written_as_text_is_told_its_number_but_not_read_in_thousands():
    with pytest.raises(solver.QueryError) as caught:
        solver.plan("14B", gpu="h100", max_model_len=65536, budget_gpus="16")  # type: ignore[arg-type]
    assert str(caught.value) == "budget_gpus must be a whole number or None, got '16' (a str: pass 16)"
    with pytest.raises(solver.QueryError) as caught:  # k is a length's thousands of tokens, not a count's
        solver.plan("14B", gpu="h100", max_model_len=65536, budget_gpus="8k")  # type: ignore[arg-type]
    assert str(caught.value) == "budget_gpus must be a whole number or None, got '8k'"
    with pytest.raises(solver.QueryError) as caught:  # a number as well as a whole one: no whole-number hint
        solver.plan("14B", gpu="h100", max_model_len=65536, budget_gpus=8, margin="0.1")  # type: ignore[arg-type]
    assert str(caught.value) == "margin must be a number or None, got '0.1' (a str: pass 0.1)"


def test_a_list_where_one_name_is_asked_for_says_so():
    with pytest.raises(solver.QueryError) as caught:  # plan and map_plans take a list of GPU types (test_gpulist_s58)
        solver.estimate_memory("14B", ["h100", "h200"], 8, 65536, sp=8)  # type: ignore[arg-type]
    assert str(caught.value) == f"a GPU is named by a string, got ['h100', 'h200']{LISTED}"
    with pytest.raises(solver.QueryError) as caught:
        solver.plan(("14B", "32B"), gpu="h100", max_model_len=65536)  # type: ignore[arg-type]
    assert str(caught.value) == f"a model is named by a string, got ('14B', '32B'){LISTED}"
    with pytest.raises(solver.QueryError) as caught:
        solver.estimate_memory("14B", ["h100"], 8, 65536, sp=8)  # type: ignore[arg-type]
    assert str(caught.value) == "a GPU is named by a string, got ['h100']: pass 'h100'"
    with pytest.raises(solver.QueryError) as caught:  # not a list of names: as before
        solver.estimate_memory("14B", ["h100", 5], 8, 65536, sp=8)  # type: ignore[arg-type]
    assert str(caught.value) == "a GPU is named by a string, got ['h100', 5]"


def test_nvidia_smis_mib_given_as_gb_is_told_its_unit(cli):
    with pytest.raises(solver.QueryError) as caught:
        solver.described_gpu_type("H100-mine", memory_gb=81559)
    assert str(caught.value) == ("H100-mine: its memory must be from 8 to 4096 GB, got 81559 GB (no GPU has 81559 GB; "
                                 "if it is nvidia-smi's total in MiB, 79.6 GiB, give memory_mib=81559)")
    with pytest.raises(solver.QueryError) as caught:  # beyond any MiB figure too: no hint
        solver.described_gpu_type("H100-mine", memory_gb=20_000_000)
    assert str(caught.value) == "H100-mine: its memory must be from 8 to 4096 GB, got 20000000 GB"
    for smi, gib in (("81559", "79.6"), ("143771", "140.4")):  # an H100's, an H200's
        status, out, err = cli("--model", "14B", "--gpu", "mine", "--gpu-memory", smi, "--len", "64k")
        assert (status, out) == (2, "")
        assert err.splitlines()[-1] == (f"solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), got "
                                        f"'{smi}' (no GPU has {smi} GB; if it is nvidia-smi's total in MiB, {gib} GiB, "
                                        f"give --gpu-memory {smi}MiB)")
    status, _, err = cli("--model", "14B", "--gpu", "mine", "--gpu-memory", "4194305", "--len", "64k")
    assert (status, err.splitlines()[-1]) == (2, ("solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), "
                                                  "got '4194305'"))  # more than any MiB figure taken
    status, _, err = cli("--model", "14B", "--gpu", "mine", "--gpu-memory", "81559GB", "--len", "64k")
    assert (status, err.splitlines()[-1]) == (2, ("solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), "
                                                  "got '81559GB'"))  # GB said: taken as said


@pytest.mark.parametrize("written", ["2TB", "512GB", "512"])
def test_host_memory_written_as_the_cli_takes_it_is_told_the_number_to_pass(written: str):
    # --host-ram takes 2TB; the API's host_ram_gb said only that it must be a number.
    with pytest.raises(solver.QueryError) as caught:
        solver.plan("8B", gpu="a100", max_model_len=32768, host_ram_gb=written)  # type: ignore[arg-type]
    assert str(caught.value) == (f"host_ram_gb must be a number or None, got {written!r} (GB per node as a number: "
                                 "2048 for 2 TB)")
