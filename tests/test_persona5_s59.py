"""An ML engineer's first plans for GPUs beyond the tables (session 59): H100 nodes, an L40S box and an RTX 4090;
GPU memory and host memory copied from nvidia-smi and free -h, and goals named in their own words."""

from __future__ import annotations

import pytest

USAGE = "usage: solve [options] (--help lists them)"
ASK = ("--model", "14B", "--gpu", "desk", "--len", "8k")


@pytest.mark.parametrize("given", ["0", "4", "7", "00"])
def test_gpu_memory_below_the_least_gets_no_mib_hint_that_is_refused_too(cli, given: str):
    # '4' is neither 4 GB (too small) nor nvidia-smi's 4 MiB: the hint named --gpu-memory 4MiB, itself refused.
    status, out, err = cli(*ASK, "--gpu-memory", given)
    assert (status, out) == (2, "")
    assert err.splitlines() == [USAGE, (f"solve: error: argument --gpu-memory: must be from 8 to 4096 (GB), got "
                                        f"'{given}'")]


@pytest.mark.parametrize(("given", "gb"), [
    ("1007Gi", "1007"), ("1.5Ti", "1536"), ("2T", "2048"), ("768G", "768"), ("2TB", "2048")])
def test_host_ram_copied_from_free_h_is_read_in_its_units(cli, given: str, gb: str):
    # Trinity 0.6 on H100s loads the model on rank 0 alone: 664.2 GiB (every rank's load, with no release named, would
    # pass 768 GiB); the line adds 0.5's need, where 0.5.2 may load it on every rank.
    status, out, err = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "128k", "--host-ram", given,
                           "--trinity-version", "0.6")
    assert (status, err) == (0, "")
    assert f"host memory    664.2 GiB per node for Offload, within --host-ram {gb} GiB; Trinity 0.5 needs 1186.4 (" in out


@pytest.mark.parametrize("given", ["1.5Tx", "512k", "1PB"])
def test_host_ram_in_other_units_is_still_refused(cli, given: str):
    status, out, err = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--len", "128k", "--host-ram", given)
    assert (status, out) == (2, "")
    assert err.splitlines()[-1] == ("solve: error: argument --host-ram: expected 512, 512GB, 512GiB, 2TB, 503Gi "
                                    "(free -h), 515870MiB (free -m) or 528280000kB (/proc/meminfo), got "
                                    f"'{given}'")


@pytest.mark.parametrize(("goal", "hint"), [
    (("--minimize", "gpu"), "did you mean 'gpus'?"),
    (("--minimize", "GPU"), "did you mean 'gpus'?"),  # GPUs, a choice in another case, is taken
    (("--maximize", "length"), "did you mean 'len'?"),
    (("--minimize", "cost"), ("the cheapest plan (the shortest step time) is what solve answers without --minimize or "
                              "--maximize: --len L; the fewest GPU-hours (GPUs x cost): --minimize gpu-hours")),
    (("--minimize", "time"), ("the cheapest plan (the shortest step time) is what solve answers without --minimize or "
                              "--maximize: --len L; the fewest GPU-hours (GPUs x cost): --minimize gpu-hours")),
    (("--minimize", "nodes"), "the fewest nodes for many jobs: solve cluster FLEET.yaml --minimize nodes")])
def test_a_goal_in_the_users_words_is_told_the_one_meant(cli, goal: tuple[str, str], hint: str):
    status, out, err = cli("--model", "14B", "--gpu", "h100", "--len", "32k", *goal)
    accepted = "'gpus', 'gpu-hours'" if goal[0] == "--minimize" else "'len'"
    assert (status, out) == (2, "")
    assert err.splitlines() == [USAGE, (f"solve: error: argument {goal[0]}: invalid choice: '{goal[1]}' (choose from "
                                        f"{accepted}); {hint}")]


def test_a_choice_like_none_gets_no_guess(cli):
    status, _, err = cli("--model", "14B", "--gpu", "h100", "--len", "32k", "--maximize", "batch")  # s87: context means len
    assert (status, err.splitlines()[-1]) == (2, ("solve: error: argument --maximize: invalid choice: 'batch' "
                                                  "(choose from 'len')"))
    status, _, err = cli("map", "--by", "lens")  # every command's choices
    assert (status, err.splitlines()[-1]) == (2, ("solve map: error: argument --by: invalid choice: 'lens' (choose "
                                                  "from 'model', 'len'); did you mean 'len'?"))


@pytest.mark.parametrize(("given", "error"), [
    ("3", "must be a fraction from 0 to below 1, got 3 (as a percentage, 3% is 0.03)"),
    ("2.5", "must be a fraction from 0 to below 1, got 2.5 (as a percentage, 2.5% is 0.025)"),
    ("1", "must be a fraction from 0 to below 1, got 1 (as a percentage, 1% is 0.01)"),
    ("150", "must be a fraction from 0 to below 1, got 150"),
    ("100%", "must be a fraction from 0 to below 1, got 100%"),
    ("-1%", "must be a fraction from 0 to below 1, got -1%"),
    ("lots%", "expected a fraction from 0 to below 1 (0.03) or a percentage (3%), got 'lots%'")])
def test_a_margin_written_as_a_bare_percentage_is_told_its_fraction(cli, given: str, error: str):
    # The cautions advise --margin 0.03; 3 is the percentage it is.
    status, out, err = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--margin", given)
    assert (status, out) == (2, "")
    assert err.splitlines() == [USAGE, f"solve: error: argument --margin: {error}"]


@pytest.mark.parametrize("given", ["0.03", "3%", " 3% "])
def test_a_margin_with_its_percent_sign_is_taken_as_its_fraction(cli, given: str):
    status, out, _ = cli("--model", "32B", "--gpu", "h100", "--gpus", "8", "--maximize", "len", "--margin", given)
    # The fraction, as the caution advises it, is taken.
    assert status == 0 and "max_model_len  154624, past the validated 131072 " in out
