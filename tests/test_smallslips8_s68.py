"""What the s68 reviews left after smallslips7: --explain's plan lines carry the guide's one-GPU caution in short, as
the summary's rows do; and the API's way to learn what `solve calibrate` warned of in a memory-model file's fit, which
`--memory-model` warns of on stderr and `plan(memory=...)` does not (docs/api.md: `solver.calibrate.implausible`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

import solver
from solver.calibrate import implausible
from solver.tables import shipped_tables_directory

Cli = Callable[..., tuple[int, str, str]]

SHORT = "one trainer GPU: Trinity-RFT's guide strongly advises more GPUs"


def test_the_explanations_plans_on_one_a100_carry_the_guides_caution_in_short(cli: Cli):
    # Qwen3-8B at 28672 tokens within one A100: the shorter length and the lowered budget are plans on one GPU (with
    # the caution), the plan on more GPUs is on two (without it).
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "8B", "--len", "28672", "--gpus", "1", "--explain", "--json")
    assert status == 1
    details = {reason["rule"]: reason["detail"] for reason in json.loads(out)[0]["explanation"]}
    # Each ends with the host memory caution its Offload on one GPU carries (cautions90): in full on the first line
    # that names it, short on a line below.
    assert details["shorter_length"] == (
        "within 1 GPU the longest length with a plan is 24576 tokens (4096 fewer): Env + Offload on 1 GPU at 24576 "
        f"tokens (documented: the A100-80GB table for 1 GPU says 'Env + Offload' at 24576; {SHORT}); caution: Offload "
        "needs 183.0 GiB of host memory per node, more than the 128 GiB assumed for its one trainer GPU there (128 GiB "
        "per GPU, as servers commonly have: a DGX A100's 1 TB for 8; --node-gpus counts all of a node's GPUs), and "
        "nothing checks it: give --host-ram what a node can spare for the trainer (free -g's total less what the OS, "
        "Ray and the rollout take) to check it; --trinity-version counts a release's own, less where verl 0.7 builds "
        "the reference model in bf16 and places the pinned blocks (0.5)")
    assert details["lower_token_budget"] == (
        "--token-budget auto trains 28672 tokens within 1 GPU: Env + Offload on 1 GPU at 28672 tokens with a lowered "
        "max_token_len_per_gpu of 49152 (estimated: the memory model predicts 68.6 GiB per GPU, 5.0 GiB to spare; "
        f"{SHORT}); caution: Offload needs 183.0 GiB of host memory per node, more than the 128 GiB assumed "
        "(unchecked: --host-ram)")
    assert details["more_gpus"] == (
        "28672 tokens need 2 GPUs, 1 more than the budget: Env + Offload + SP=2 on 2 GPUs at 28672 tokens (documented: "
        "the A100-80GB table for 2 GPUs says 'Env + Offload + SP=2' at 28672)")


def test_the_explanations_plan_without_pins_carries_it_in_the_text_too(cli: Cli):
    status, out, _ = cli("--gpu", "a100-80gb", "--model", "14B", "--len", "8192", "--gpus", "1", "--no-offload",
                         "--explain")
    assert status == 1
    assert " ".join(out[out.index("without_pins"):].split()).startswith(
        "without_pins without --no-offload: Env + Offload on 1 GPU at 8192 tokens (documented: the A100-80GB table "
        f"for 1 GPU says 'Env + Offload' at 8192; {SHORT})")


def test_plan_with_a_warned_of_memory_model_says_nothing_and_implausible_says_what(tmp_path: Path):
    # docs/api.md: plan(memory=...) names only the memory model's source; implausible(memory.coefficients) gives
    # what solve calibrate warned of in its fit (and --memory-model on stderr), [] for the shipped one.
    shipped = solver.load_memory_model()
    assert implausible(shipped.coefficients) == []
    text = yaml.safe_load((shipped_tables_directory() / "memory-model.yaml").read_text(encoding="utf-8"))
    text["coefficients"].update(states=0.9, usable_env=1.0)
    path = tmp_path / "odd.yaml"
    path.write_text(yaml.safe_dump(text), encoding="utf-8")
    odd = solver.load_memory_model(path)
    (answer,) = solver.plan("8B", gpu="h100", max_model_len=131072, budget_gpus=8, memory=odd)
    said = json.dumps(answer.as_json())
    assert answer.plans and answer.plans[0].evidence == "estimated"
    assert answer.memory_model_source == odd.own_source
    assert "physical range" not in said and "plausible range" not in said
    assert implausible(odd.coefficients) == [
        "states 0.9 below its physical range", "usable_env 1 at the edge of its plausible range"]
