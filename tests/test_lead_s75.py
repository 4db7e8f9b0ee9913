"""The lead's own fixes of session 75: --write's note above a flow-style ``model`` line is wrapped at the column it
is written at (the file's margin), so a later --write, which finds where each paragraph ends by a greedy wrap there,
takes all of it away (the two-peak evidence of a PPO critic's plan left its second line behind)."""

from __future__ import annotations

import solver
from solver.tables import load_catalog
from solver.trinity.patch import patch_trinity_config
from solver.trinity.plan_keys import COMMENT_WIDTH

FLOW_MODEL = """\
algorithm: {algorithm_type: ppo}
model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}
cluster: {node_num: 1, gpu_per_node: 8}
explorer:
  rollout_model: {engine_num: 4, tensor_parallel_size: 1}
trainer:
  trainer_strategy: fsdp2
"""
"""A PPO config whose ``model`` is one flow-style line: --write's note goes above it, at column 0."""


def test_the_note_above_a_flow_style_model_is_wrapped_at_the_margin_and_rewritten_whole():
    plan = solver.plan("4B", gpu="h100", max_model_len=8192, budget_gpus=4, critic="offloaded")[0].best
    model = load_catalog().model("4B")
    written = patch_trinity_config(FLOW_MODEL, plan, model)
    lines = written.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("# evidence: ")))
    note = lines[start:lines.index("model: {model_path: Qwen/Qwen3-4B, max_model_len: 8192}")]
    assert note == [
        "# evidence: estimated: the memory model predicts 38.6 GiB per GPU for the actor's pass and 21.0 for",
        "#   the critic's own update, 34.7 GiB to spare at the actor's pass, the tighter peak"]
    assert all(len(line) <= COMMENT_WIDTH for line in note)
    # Before, wrapped at column 2 (the YAML's indentation), "for" went to the second line, which a later --write did
    # not take for the paragraph's (the greedy wrap at column 0 would have kept it on the first): it stayed, twice.
    again = patch_trinity_config(written, plan, model, version="0.6")
    assert again == patch_trinity_config(FLOW_MODEL, plan, model, version="0.6")
    assert sum(line.startswith("#   the critic's own update") for line in again.splitlines()) == 1
