"""Tests for session 78's newcomer review (persona53): the claims README.md and docs/guide.md add for someone
following them word by word: six A100s used whole reach 51200 tokens for Qwen3-4B (half of four's 102400); the
fewest GPUs are sought among every count up to 64 without `--gpus`, within N with it; the rollout's GPUs are the
user's to choose, and `--emit trinity` says where one A100 cannot hold Qwen3-32B's engine at 32768 tokens; the
three questions the README promises, for Qwen3-4B/8B/14B on A100 and H20."""

from __future__ import annotations

import pytest

import solver


def test_six_a100s_used_whole_reach_half_of_what_four_reach(cli):
    status, out, _ = cli("--maximize", "len", "--gpus", "6", "--exact", "--model", "4B", "--gpu", "a100")
    assert status == 0
    assert "plan           Env + Offload + SP=2 on 6 of 6 GPUs (none left for rollout)\n" in out
    assert "max_model_len  51200 (YaRN rope scaling, factor 1.25)\n" in out
    status, out, _ = cli("--maximize", "len", "--gpus", "6", "--model", "4B", "--gpu", "a100")
    assert status == 0 and "plan           Env + Offload + SP=4 on 4 of 6 GPUs (2 left for rollout)\n" in out
    assert "max_model_len  102400 (YaRN rope scaling, factor 2.5)\n" in out


@pytest.mark.parametrize(("budget", "heading", "gpus"), [
    ((), "A100-80GB · Qwen3-14B · fewest GPUs for 65536 tokens (any count up to 64): optimal\n", "4 GPUs"),
    (("--gpus", "4"), "A100-80GB · Qwen3-14B · fewest GPUs for 65536 tokens (budget 4): optimal\n",
     "4 of 4 GPUs (none left for rollout)"),
])
def test_the_fewest_gpus_heading_says_where_they_were_sought(cli, budget: tuple[str, ...], heading: str, gpus: str):
    status, out, _ = cli("--model", "14B", "--len", "65536", "--minimize", "gpus", "--gpu", "a100", *budget)
    assert status == 0 and out.startswith(heading)
    assert f"\nplan           Env + Offload + SP=4 on {gpus}\n" in out


def test_one_a100_for_the_rollout_of_qwen3_32b_is_told_to_take_more(cli):
    status, out, err = cli("--len", "32k", "--total-gpus", "8", "--rollout-gpus", "1", "--model", "32B",
                           "--gpu", "a100", "--emit", "trinity")
    assert status == 0
    assert ("solve: note: Qwen3-32B's bf16 weights (61.0 GiB) and one sequence's KV cache (8.0 GiB) per GPU at "
            "tensor-parallel size 1 take more than half of what vLLM takes of one A100-80GB (71.0 GiB: 90% of its "
            "memory, less 1 GiB for the CUDA context): little room for sequences in flight; give the rollout more "
            "GPUs, a count that a larger tensor-parallel size divides\n") in err
    assert "    engine_num: 1  # one GPU each\n    tensor_parallel_size: 1\n" in out


# the longest context within 4 GPUs (Env + Offload + SP=4 on all four for each), then the cheapest plan at 65536
# tokens within the default 6 GPUs, which is also the fewest GPUs' plan there
NEWCOMER_ANSWERS = [
    ("4B", "a100", 102400, (4, False, False, 4)),
    ("4B", "h20", 133120, (4, False, False, 4)),
    ("8B", "a100", 102400, (4, True, True, 4)),
    ("8B", "h20", 122880, (4, True, False, 4)),
    ("14B", "a100", 92160, (4, True, True, 4)),
    ("14B", "h20", 112640, (4, True, True, 4)),
]


@pytest.mark.parametrize(("model", "gpu", "longest", "plan_at_65536"), NEWCOMER_ANSWERS)
def test_the_three_questions_for_the_tabled_models(model: str, gpu: str, longest: int,
                                                   plan_at_65536: tuple[int, bool, bool, int]):
    def shape(answer: solver.Answer) -> tuple[int, bool, bool, int]:
        best = answer.plans[0]
        assert best.evidence == "documented"
        return best.gpus, best.env, best.offload, best.sp

    (longest_answer,) = solver.plan(model, gpu=gpu, objective="max_len", budget_gpus=4)
    assert longest_answer.plans[0].max_model_len == longest and shape(longest_answer) == (4, True, True, 4)
    (cheapest,) = solver.plan(model, gpu=gpu, max_model_len=65536)
    (fewest,) = solver.plan(model, gpu=gpu, objective="min_gpus", max_model_len=65536)
    assert cheapest.budget_gpus == 6 and shape(cheapest) == shape(fewest) == plan_at_65536
