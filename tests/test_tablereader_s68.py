"""A user's check of `--explain` against a `-` cell of the source: the limit it names keeps to the budget."""

from __future__ import annotations

import json
from collections.abc import Callable


def test_a_dash_cell_within_the_budget_is_no_limit_on_every_gpu_count(cli: Callable[..., tuple[int, str, str]]):
    # The H20-96GB table for 4 GPUs says '-' for Qwen3-8B at 133120. Without the budget in the words the limit read
    # "nothing ... vouches for Qwen3-8B on H20-96GB at 133120 tokens", while the next reason names 8 GPUs that do.
    status, out, _ = cli("--gpu", "h20", "--model", "8B", "--len", "133120", "--gpus", "4", "--explain", "--json")
    reasons = {reason["rule"]: reason["detail"] for reason in json.loads(out)[0]["explanation"]}
    assert status == 1 and reasons["limit"] == (
        "no plan passes this rule: nothing in the tables and the memory model's estimates vouches for Qwen3-8B on "
        "H20-96GB at 133120 tokens within 4 GPUs (longest per GPU count: 1 GPU: 28672, 2 GPUs: 61440, 3 GPUs: 28672, "
        "4 GPUs: 122880)")
    assert reasons["more_gpus"].startswith("133120 tokens need 8 GPUs, 4 more than the budget: Env + SP=8 on 8 GPUs ")
