"""A new user's first hour (persona 38: Qwen3-30B-A3B and Qwen3-14B with GRPO on MI300X and H100 nodes): what they
copied or read that was wrong, each fixed here."""

from __future__ import annotations

import json
from pathlib import Path

from test_jsonapply_s63 import _apply_keys, _flat, _json_answer

MOE_64K = ["--model", "30B-A3B", "--gpu", "mi300x", "--len", "64k", "--total-gpus", "8", "--rollout-gpus", "4"]

MOE_CONFIG = """\
algorithm:
  algorithm_type: grpo
  repeat_times: 8
buffer:
  batch_size: 32
model:
  model_path: Qwen/Qwen3-30B-A3B
  max_model_len: 65536
cluster:
  node_num: 2
  gpu_per_node: 8
explorer:
  rollout_model:
    engine_num: 4
    tensor_parallel_size: 2
"""


def _apply_block(text: str) -> list[str]:
    """The apply block's lines: after the ``apply`` row, up to the blank line that ends it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("apply ")) + 1
    return lines[start:lines.index("", start)]


def test_the_apply_lines_set_a_moes_rope_theta_beside_its_yarn(cli):
    """Qwen3-MoE's vLLM class takes no RoPE base of its own: a rope_scaling without model.rope_theta rolls out at
    10000, not the model's 1000000. The JSON's apply and --emit trinity set it; the apply lines, which people copy,
    left it out, and the config they made then drew a `but:` line asking for it."""
    status, text, _ = cli(*MOE_64K)
    assert status == 0
    block = _apply_block(text)
    at = block.index("model.rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, "
                     "rope_theta: 1000000}")
    assert block[at + 1:at + 3] == [
        "# Qwen3-30B-A3B's own RoPE base; the rollout's vLLM takes 10000 where the rope_scaling comes without it:",
        "model.rope_theta: 1000000"]
    config = _flat(_json_answer(cli, *MOE_64K)["apply"]["config"])
    assert _apply_keys(text) == {path: value for path, value in config.items()
                                 if path[0] not in ("cluster", "explorer")}


def test_the_apply_lines_pasted_into_a_config_leave_no_rope_theta_warning(cli, tmp_path: Path):
    config = tmp_path / "moe.yaml"
    config.write_text(MOE_CONFIG)
    status, text, _ = cli("--from-config", str(config), "--gpu", "mi300x")
    assert status == 0
    pasted = [line for line in _apply_block(text) if line.startswith("model.")]
    assert pasted == ["model.max_model_len: 65536",
                      ("model.rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, "
                       "rope_theta: 1000000}"),
                      "model.rope_theta: 1000000"]
    config.write_text(MOE_CONFIG.replace("  max_model_len: 65536\n", "  max_model_len: 65536\n  rope_scaling: "
                                         "{rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}\n"
                                         "  rope_theta: 1000000\n"))
    status, text, _ = cli("--from-config", str(config), "--gpu", "mi300x", "--json")
    assert status == 0 and '"rope-theta-dropped"' not in text


def test_a_configs_own_rope_theta_stays_in_the_apply_lines(cli, tmp_path: Path):
    config = tmp_path / "moe.yaml"
    config.write_text(MOE_CONFIG.replace("  max_model_len: 65536\n", "  max_model_len: 65536\n  rope_theta: 1000000\n"))
    status, text, _ = cli("--from-config", str(config), "--gpu", "mi300x")
    assert status == 0
    block = _apply_block(text)
    assert "# model.rope_theta: moe.yaml's stays, as --write keeps it" in block
    assert not any(line.startswith("model.rope_theta:") for line in block)


def test_a_dense_qwen3s_apply_lines_set_no_rope_theta(cli):
    """vLLM's Qwen3 dense class defaults to its 1000000: nothing is lost, and nothing is written."""
    status, text, _ = cli("--model", "14B", "--gpu", "mi300x", "--len", "64k", "--total-gpus", "8",
                          "--rollout-gpus", "4")
    assert status == 0
    assert ("model.rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, "
            "rope_theta: 1000000}") in text  # in the mapping, for Trinity 0.6's trainer (ropetheta, s78)
    assert "model.rope_theta" not in text


def _config_problems(cli, config: Path, status: int = 0) -> dict[str, str]:
    """What --from-config --json says of the config's own settings (with the exit `status` expected): each problem
    by its code."""
    status_now, out, err = cli("--from-config", str(config), "--gpu", "mi300x", "--json")
    assert status_now == status, err
    (answer,) = json.loads(out)
    return dict(zip(answer["current"]["config_problem_codes"], answer["current"]["config_problems"], strict=True))


def test_the_missing_yarn_line_names_a_moes_rope_theta_too(cli, tmp_path: Path):
    """The refused: line's fix for a config with no rope_scaling is what --write sets: for Qwen3-30B-A3B that is its
    rope_theta too, which the line left out, so the config fixed by it drew the rope-theta-dropped line next."""
    config = tmp_path / "moe.yaml"
    config.write_text(MOE_CONFIG)
    assert _config_problems(cli, config)["rope-scaling-missing-refused"].endswith(
        "set {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000} and "
        "model.rope_theta: 1000000 (as --write does)")
    config.write_text(MOE_CONFIG.replace("  max_model_len: 65536\n", "  max_model_len: 65536\n  rope_theta: 1000000\n"))
    assert _config_problems(cli, config)["rope-scaling-missing-refused"].endswith(
        "set {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, rope_theta: 1000000} (as --write "
        "does)")


def test_the_default_budget_the_readme_gives_for_a_gpu_type_without_tables(cli):
    """The README and the guide said 6 GPUs without --gpus, the A100's and H20's; an H100 or MI300X user got 8."""
    for gpu, budget in (("mi300x", 8), ("h100", 8), ("a100", 6), ("h20", 6)):
        assert _json_answer(cli, "--model", "14B", "--gpu", gpu, "--len", "32k")["budget_gpus"] == budget
    root = Path(__file__).parent.parent
    readme = " ".join((root / "README.md").read_text().split())
    guide = " ".join((root / "docs" / "guide.md").read_text().split())
    assert ("(without `--gpus`: 6 for the A100 and H20, 8 for a GPU type without tables, such as the H100 or MI300X)"
            in readme)
    assert ("without `--gpus`, the budget is the largest documented count: 6 for the A100 and H20 (8 for a GPU type "
            "without tables, such as the H100 or MI300X), one budget for the GPU types answered together" in guide)


def test_costs_side_by_side_across_gpu_types_say_they_do_not_compare(cli):
    """MI300X 0.2777 beside H100 0.6565 read as an MI300X 2.4 times faster: the costs count GPUs and settings (Env +
    SP=2 against Env + Offload + SP=4 here), not a GPU type's speed, as the cluster's legend and docs/cli.md say."""
    query = ("--model", "14B", "--len", "64k", "--total-gpus", "8", "--rollout-gpus", "4")
    status, text, _ = cli(*query, "--gpu", "mi300x,h100")
    assert status == 0
    assert [line for line in text.splitlines() if line.startswith("cost ")] == [
        f"cost           {cost} relative step time (best); compare it within one GPU type: a cost counts GPUs and "
        "settings, not a GPU type's speed" for cost in ("0.2777", "0.6565")]
    status, text, _ = cli(*query, "--gpu", "mi300x")
    assert status == 0
    assert [line for line in text.splitlines() if line.startswith("cost ")] == [
        "cost           0.2777 relative step time (best)"]


def test_a_rollout_engine_note_names_the_hip_context_on_an_mi300x(cli, tmp_path: Path):
    """The memory model's words say HIP and RCCL on an AMD GPU; the rollout engines' note said CUDA there too."""
    query = ("--model", "32B", "--len", "128k", "--total-gpus", "16", "--rollout-gpus", "8", "--emit", "trinity")
    status, _, err = cli(*query, "--gpu", "mi300x")
    assert status == 0
    assert ("solve: note: rollout engines of tensor-parallel size 2: Qwen3-32B's bf16 weights (30.5 GiB) and one "
            "sequence's KV cache (16.0 GiB) per GPU take at most half of what vLLM takes of one MI300X (171.8 GiB: 90% "
            "of its memory, less 1 GiB for the HIP context), leaving the rest to sequences in flight") in " ".join(
                err.split())
    status, _, err = cli(*query, "--gpu", "h100")
    assert status == 0 and "less 1 GiB for the CUDA context)" in " ".join(err.split())
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: mi300x, gpu: MI300X, nodes: 2, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: big, model: Qwen3-32B, max_model_len: 131072, rollout_gpus: 8}\n")
    status, _, err = cli("cluster", str(fleet), "--emit-dir", str(tmp_path / "configs"))
    assert status == 0
    assert ("solve cluster: note: big: rollout engines of tensor-parallel size 2: Qwen3-32B's bf16 weights (30.5 GiB) "
            "and one sequence's KV cache (16.0 GiB) per GPU take at most half of what vLLM takes of one MI300X "
            "(171.8 GiB: 90% of its memory, less 1 GiB for the HIP context)") in " ".join(err.split())


def test_a_refused_rollout_engine_names_the_hip_context_on_an_mi300x(cli, tmp_path: Path):
    config = tmp_path / "big.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-32B\n  max_model_len: 524288\n  rope_scaling: {rope_type: "
                      "yarn, factor: 12.8, original_max_position_embeddings: 40960}\ncluster:\n  node_num: 2\n"
                      "  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 8\n"
                      "    tensor_parallel_size: 1\n")
    said = _config_problems(cli, config, status=1)["rollout-engine-memory-refused"]
    assert ("take more than what vLLM takes of one MI300X (171.8 GiB: Trinity's default gpu_memory_utilization 0.9 of "
            "its 192.0 GiB, less 1 GiB for the HIP context)") in said


def test_solve_map_says_what_to_give_in_place_of_the_rollout_options(cli):
    """Half the GPUs for the rollout: solve map refused --rollout-gpus without saying that its budgets are the
    trainer's alone, so what to give it."""
    why = ("the map's budgets count trainer GPUs alone: give --gpus-up-to (or --budgets) the trainer's share, the "
           "total less the rollout's, or ask solve --total-gpus T --rollout-gpus R")
    for option, value in (("--rollout-gpus", "4"), ("--total-gpus", "8")):
        status, out, err = cli("map", "--gpu", "mi300x", "--model", "14B", option, value)
        assert (status, out) == (2, "")
        assert err == ("usage: solve map [options] (--help lists them)\n"
                       f"solve map: error: {option} is an option of solve, not of solve map: {why}\n")
