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
    assert err.splitlines() == [USAGE, f"solve: error: argument --gpu-memory: must be from 8 to 16384 (GB), got "
                                       f"'{given}'"]


def test_gpu_memory_past_the_most_still_gets_its_mib_hint(cli):
    status, _, err = cli(*ASK, "--gpu-memory", "81559")
    assert (status, err.splitlines()[-1]) == (2, ("solve: error: argument --gpu-memory: must be from 8 to 16384 (GB), "
                                                  "got '81559' (nvidia-smi's total is in MiB: --gpu-memory 81559MiB)"))
