"""A user's afternoon (session 75, persona41): PPO with a critic, GRPO with LoRA and a TP=2 rollout, SFT. What it
found: a vLLM rollout's tensor_parallel_size that the model's heads do not allow passed ``--check``
(`rollout-tp-heads-refused`), and ``--top``'s source cell gave a PPO critic plan's actor peak alone where the
critic's own update is the tighter one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.tables import load_catalog, sp_rule_violation
from solver.trinity import trinity_config_problems

CATALOG = load_catalog()
CODE = "rollout-tp-heads-refused"
Cli = Callable[..., tuple[int, str, str]]


def _grpo(tmp_path: Path, rollout: str, *, cluster: str = "cluster: {node_num: 1, gpu_per_node: 8}\n",
          mode: str = "both") -> Path:
    """A GRPO config for Qwen3-14B (40 attention heads, 8 KV heads) at 32768 tokens with a LoRA of rank 32 and
    `rollout` as its ``explorer.rollout_model`` (flow mapping text)."""
    config = tmp_path / "grpo.yaml"
    config.write_text(f"mode: {mode}\nalgorithm: {{algorithm_type: grpo, repeat_times: 8}}\n"
                      "buffer: {batch_size: 32}\n"
                      "model: {model_path: Qwen/Qwen3-14B, max_model_len: 32768, lora_configs: [{lora_rank: 32}]}\n"
                      f"{cluster}explorer: {{rollout_model: {{{rollout}}}}}\n", encoding="utf-8")
    return config


def _current(cli: Cli, config: Path, *options: str) -> tuple[int, dict[str, Any]]:
    """`--check --json`'s exit status and verdict on `config` on H100s, with Env on as the plan has it."""
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json", *options)
    [answer] = json.loads(out)
    current: dict[str, Any] = answer["current"]
    return status, current


TP3 = ("explorer.rollout_model.tensor_parallel_size: TP=3 does not divide its 40 attention heads of Qwen3-14B: the "
       "rollout's vLLM refuses it as the engine starts; set it to 1, 2, 4 or 8, the sizes the heads allow within a "
       "node of 8 GPUs (and the cluster's GPUs to match)")


@pytest.fixture(autouse=True)
def _env_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Env on in the shell, as the plans have it: the verdicts then differ only by the rollout."""
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


def test_a_rollout_tensor_parallel_size_that_does_not_divide_the_heads_is_refused(cli: Cli, tmp_path: Path):
    # vLLM 0.19.1 raises "Total number of attention heads (40) must be divisible by tensor parallel size (3)" as the
    # engine starts; rft-solver passed it (exit 0). Now refused: --check exits 1, and the line names 1, 2, 4 or 8.
    status, current = _current(cli, _grpo(tmp_path, "engine_num: 1, tensor_parallel_size: 3"))
    assert (status, current["refused"]) == (1, True)
    assert current["config_problem_codes"] == [CODE, "lora-counted-as-full"]  # the second: the LoRA note
    assert current["config_problems"][0] == TP3


def test_a_size_and_kv_heads_that_do_not_divide_one_another_are_refused(cli: Cli, tmp_path: Path):
    # 5 divides the 40 attention heads, but neither it nor the 8 KV heads divides the other: vLLM's Qwen3 attention
    # asserts it (model_executor/models/qwen3.py:83-90).
    _, current = _current(cli, _grpo(tmp_path, "engine_num: 1, tensor_parallel_size: 5",
                                     cluster="cluster: {node_num: 1, gpu_per_node: 6}\n"))
    assert [words for words in current["config_problems"] if words.startswith("explorer.rollout_model.tensor")] == [(
        "explorer.rollout_model.tensor_parallel_size: TP=5 and its 8 KV heads do not divide one another of "
        "Qwen3-14B: the rollout's vLLM refuses it as the engine starts; set it to 1, 2 or 4, the sizes the heads "
        "allow within a node of 6 GPUs (and the cluster's GPUs to match)")]


@pytest.mark.parametrize(("rollout", "mode"), [
    ("engine_num: 2, tensor_parallel_size: 2", "both"),  # the heads allow 2
    ("engine_num: 1, tensor_parallel_size: 3, engine_type: tinker", "both"),  # no vLLM starts
    ("engine_num: 0, tensor_parallel_size: 3", "both"),  # no engine
    ("engine_num: 1, tensor_parallel_size: 3", "train"),  # no explorer
])
def test_no_line_where_the_heads_allow_the_size_or_no_vllm_engine_starts(cli: Cli, tmp_path: Path, rollout: str,
                                                                         mode: str):
    config = _grpo(tmp_path, rollout, mode=mode)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json", "--train-batch-size", "256")
    [answer] = json.loads(out)
    assert status == 0 and CODE not in answer["current"]["config_problem_codes"]


def test_without_gpu_per_node_the_line_names_the_sizes_up_to_8():
    # The API's checks, on nested mappings: no cluster.gpu_per_node, so the sizes the heads allow up to 8.
    mapping = {"algorithm": {"algorithm_type": "grpo"}, "model": {"model_path": "Qwen/Qwen3-14B"},
               "explorer": {"rollout_model": {"tensor_parallel_size": 6}}}
    problems = trinity_config_problems(mapping, CATALOG.model("Qwen3-14B"), 4, max_model_len=32768)
    assert [problem.words for problem in problems if problem.code.value == CODE] == [(
        "explorer.rollout_model.tensor_parallel_size: TP=6 does not divide its 40 attention heads of Qwen3-14B: the "
        "rollout's vLLM refuses it as the engine starts; set it to 1, 2, 4 or 8, the sizes the heads allow up to 8 "
        "(and the cluster's GPUs to match)")]


def test_write_warns_of_the_size_and_the_written_config_still_fails_its_check(cli: Cli, tmp_path: Path):
    # The plan sets no rollout size: --write keeps 3 (4 trainer GPUs of a node of 7), writes the file and warns of
    # it; its check exits 1.
    written = tmp_path / "fixed.yaml"
    config = _grpo(tmp_path, "engine_num: 1, tensor_parallel_size: 3",
                   cluster="cluster: {node_num: 1, gpu_per_node: 7}\n")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))
    words = TP3.replace("1, 2, 4 or 8", "1, 2 or 4").replace("node of 8", "node of 7")
    assert status == 0 and f"solve: warning: {written}: {words}\n" in err
    assert "tensor_parallel_size: 3" in written.read_text(encoding="utf-8")
    assert _current(cli, written)[0] == 1


def test_sp_rule_violation_names_the_degree_it_is_given():
    assert sp_rule_violation(40, 8, 3) == "SP=3 does not divide its 40 attention heads"
    assert sp_rule_violation(40, 8, 3, degree="TP") == "TP=3 does not divide its 40 attention heads"
    assert sp_rule_violation(40, 8, 2, degree="TP") is None


def test_top_gives_both_peaks_of_a_critic_plan_in_its_source_cell(cli: Cli):
    # Qwen3-8B at 16384 on H100s with a reloaded critic: on 4 GPUs the critic's own update (66.0 GiB) peaks above the
    # actor's pass (57.9), the tighter one, which the source cell left out; now both, and a note says which is which.
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "16384", "--critic", "reloaded",
                         "--top", "5")
    assert status == 0
    cells = [line.split("│")[-2].strip() for line in out.splitlines() if line.startswith("│ ")]
    assert cells == ["memory model: 62.8 / 48.5 GiB", "memory model: 65.1 / 52.2 GiB", "memory model: 68.1 / 57.2 GiB",
                     "memory model: 72.2 / 64.1 GiB", "memory model: 57.9 / 66.0 GiB"]
    assert ("memory model: A / C GiB: the predicted peak per GPU of the actor's pass (A) and of the PPO critic's own "
            "update (C)\n") in out
    assert "57.9 GiB per GPU predicted for the actor's pass and 66.0 for the critic's own update" not in out  # plan #1
    assert "62.8 GiB per GPU predicted for the actor's pass and 48.5 for the critic's own update" in out


def test_top_without_a_critic_keeps_its_source_cell_and_no_note(cli: Cli):
    # The actor's pass is the same figure as with a reloaded critic, which leaves it as it is alone.
    status, out, _ = cli("--model", "8B", "--gpu", "h100", "--gpus", "8", "--len", "16384", "--top", "2")
    assert status == 0 and "actor's pass (A)" not in out
    assert [line.split("│")[-2].strip() for line in out.splitlines() if line.startswith("│ ")] == [
        "memory model: 62.8 GiB", "memory model: 65.1 GiB"]


def _fleet_with_critic(tmp_path: Path, critic: str) -> Path:
    """A fleet of one node of 8 H100s and one PPO job whose ``critic:`` is `critic` as written."""
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: h100, gpu: H100, nodes: 1, gpus_per_node: 8}\n"
                     f"jobs:\n  - name: ppo-8b\n    model: Qwen3-8B\n    max_model_len: 16384\n    critic: {critic}\n",
                     encoding="utf-8")
    return fleet


@pytest.mark.parametrize(("critic", "got"), [
    # sftmode89: a word --critic guesses (solver.tables.CRITIC_CHOICES_MEANT) gets the same guess here
    ("no", "false (YAML reads it, unquoted, as true or false: write one of the words); did you mean 'none'?"),
    ("off", "false (YAML reads it, unquoted, as true or false: write one of the words); did you mean 'none'?"),
    ("yes", "true (YAML reads it, unquoted, as true or false: write one of the words); did you mean 'resident'?"),
    ("gpu", "'gpu'; did you mean 'resident'?"),
    ("~", "null (YAML reads it, unquoted, as null: write one of the words)"),
    ("1", "1 (YAML reads it, unquoted, as a number: write one of the words)"),
    ("residnet", "'residnet'; did you mean 'resident'?"),  # s87: Resident is taken, as --critic Resident
    ("resdent", "'resdent'; did you mean 'resident'?"),  # words90: a choice misspelt is guessed, as --critic guesses
    ("'no'", "'no'; did you mean 'none'?"),
])
def test_a_job_s_critic_of_another_word_is_refused_saying_what_yaml_read(cli: Cli, tmp_path: Path, critic: str,
                                                                         got: str):
    # Pydantic's "Input should be ..." said neither what was given nor that YAML read `no` as false; a job's other
    # fields say "must be ..., got ...", and so does this one now.
    fleet = _fleet_with_critic(tmp_path, critic)
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 7: job ppo-8b, critic: must be 'none', 'resident', 'offloaded' or "
        f"'reloaded', got {got}\n"))


def test_a_pool_s_interconnect_by_another_tool_s_name_is_refused_in_the_same_words(cli: Cli, tmp_path: Path):
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text("pools:\n  - {name: lab, gpu: H100, nodes: 1, gpus_per_node: 8, gpu_interconnect: nvswitch}\n"
                     "jobs:\n  - {name: a, model: Qwen3-8B, max_model_len: 8192}\n", encoding="utf-8")
    assert cli("cluster", str(fleet)) == (2, "", (
        f"solve cluster: error: {fleet}: line 2: pool lab, gpu_interconnect: must be 'nvlink', 'infinity-fabric' or "
        "'pcie', got 'nvswitch'; did you mean 'nvlink'? (NVSwitch joins a node's GPUs by NVLink)\n"))


def _engine_problems(explorer: dict[str, Any], node_gpus: int | None = 8, version: Any = None) -> list[str]:
    """The `engine-nodes-refused` lines of the API's checks on a GRPO config of Qwen3-8B with `explorer`, on nodes of
    `node_gpus` (None: unset)."""
    mapping: dict[str, Any] = {"algorithm": {"algorithm_type": "grpo"}, "model": {"model_path": "Qwen/Qwen3-8B"},
                               "explorer": explorer}
    if node_gpus is not None:
        mapping["cluster"] = {"node_num": 4, "gpu_per_node": node_gpus}
    problems = trinity_config_problems(mapping, CATALOG.model("Qwen3-8B"), 8, max_model_len=16384, version=version)
    return [problem.words for problem in problems if problem.code.value == "engine-nodes-refused"]


NOT_WHOLE = ("explorer.rollout_model: an engine of 12 GPUs (tensor_parallel_size 4 x pipeline_parallel_size 3) spans "
             "nodes of 8 (cluster.gpu_per_node) but is not whole nodes: Trinity 0.6 refuses the config (an engine "
             "across nodes takes whole ones); make it 8 GPUs or fewer, or a multiple of 8")
DATA_ACROSS = ("explorer.auxiliary_models[0]: an engine of 16 GPUs (tensor_parallel_size 4 x data_parallel_size 4) "
               "spans nodes of 8 (cluster.gpu_per_node) with data_parallel_size 4: Trinity 0.6 refuses the config "
               "(vLLM takes no data parallelism across nodes); keep each engine within a node, or set "
               "data_parallel_size to 1")


def test_engines_across_nodes_that_trinity_0_6_refuses_are_refused():
    # Trinity 0.6.0's _validate_multinode_inference_models (common/config_validator.py:301-339) raises on both.
    explorer = {"rollout_model": {"tensor_parallel_size": 4, "pipeline_parallel_size": 3},
                "auxiliary_models": [{"model_path": "Qwen/Qwen3-32B", "tensor_parallel_size": 4,
                                      "data_parallel_size": 4}]}
    assert _engine_problems(explorer) == [NOT_WHOLE, DATA_ACROSS]
    assert _engine_problems(explorer, version="0.6") == [NOT_WHOLE, DATA_ACROSS]
    assert _engine_problems(explorer, version="0.5") == []  # 0.5.2 has neither check (nor the keys)
    assert _engine_problems(explorer, node_gpus=None) == []  # Trinity finds the node size: not judged


@pytest.mark.parametrize("engine", [
    {"tensor_parallel_size": 8, "pipeline_parallel_size": 2},  # whole nodes, no data parallelism: multi-node vLLM
    {"tensor_parallel_size": 4, "data_parallel_size": 2},  # a node's 8 GPUs
    {"tensor_parallel_size": 4, "data_parallel_size": 4, "engine_type": "sglang"},  # not vLLM's rule
    {"tensor_parallel_size": 12, "engine_type": "tinker"},  # runs elsewhere
])
def test_engines_within_a_node_or_across_whole_nodes_pass(engine: dict[str, Any]):
    assert _engine_problems({"rollout_model": engine}) == []


def test_check_exits_1_on_an_engine_across_nodes(cli: Cli, tmp_path: Path):
    config = tmp_path / "e.yaml"
    config.write_text("mode: both\nalgorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
                      "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
                      "cluster: {node_num: 2, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {tensor_parallel_size: 4, pipeline_parallel_size: 3}}\n",
                      encoding="utf-8")
    status, current = _current(cli, config)
    assert (status, current["refused"], current["config_problem_codes"]) == (1, True, ["engine-nodes-refused"])
    assert current["config_problems"] == [NOT_WHOLE]


RUNNING_FLEET = """pools:
  - {{name: h100, gpu: H100, nodes: 2, gpus_per_node: 8, host_ram_gb: 1536}}
jobs:
  - {{name: ppo-8b, model: Qwen3-8B, max_model_len: 16384, rollout_gpus: 4, critic: {critic}, priority: 3}}
  - {{name: grpo-14b, model: Qwen3-14B, max_model_len: 32768, rollout_gpus: 4, lora_rank: {rank}}}
"""


def _placed_now(cli: Cli, tmp_path: Path) -> Path:
    """The placement of `RUNNING_FLEET` with a reloaded critic and LoRA rank 32, as its --json wrote it."""
    fleet = tmp_path / "now.yaml"
    fleet.write_text(RUNNING_FLEET.format(critic="reloaded", rank=32), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 0
    placement = tmp_path / "now.json"
    placement.write_text(out, encoding="utf-8")
    return placement


@pytest.mark.parametrize(("critic", "rank", "moves"), [
    ("resident", 32, {"ppo-8b": "the file asks critic resident now; it runs with critic reloaded"}),
    ("none", 32, {"ppo-8b": "the file asks critic none now; it runs with critic reloaded"}),
    ("reloaded", 64, {"grpo-14b": "the file asks lora_rank 64 now; it runs with lora_rank 32"}),
    ("reloaded", 32, {}),
])
def test_a_running_job_whose_lora_rank_or_critic_the_file_changed_moves(cli: Cli, tmp_path: Path, critic: str,
                                                                        rank: int, moves: dict[str, str]):
    # A run changes its LoRA rank or critic only by restarting: it said "stays" for LoRA 32 -> 64 (its ways still
    # fit as it ran), and "moves" for a changed critic with a reason about its SP and Offload.
    placement = _placed_now(cli, tmp_path)
    fleet = tmp_path / "then.yaml"
    fleet.write_text(RUNNING_FLEET.format(critic=critic, rank=rank), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(placement), "--json")
    assert status == 0
    placed = {entry["job"]: entry for entry in json.loads(out)["placements"]}
    assert {job: entry["move_reason"] for job, entry in placed.items() if entry["current"] == "moves"} == moves
    assert {job: entry["move_reason_code"] for job, entry in placed.items() if entry["current"] == "moves"} == {
        job: "training-changed" for job in moves}
    assert {job for job, entry in placed.items() if entry["current"] == "stays"} == {"ppo-8b", "grpo-14b"} - {*moves}


def test_a_placement_without_lora_rank_keys_is_not_compared_on_them(cli: Cli, tmp_path: Path):
    # An older placement's plans give no lora_rank or critic: the jobs stay as before, whatever the file asks.
    placement = _placed_now(cli, tmp_path)
    raw = json.loads(placement.read_text(encoding="utf-8"))
    for entry in raw["placements"]:
        del entry["plan"]["lora_rank"], entry["plan"]["critic"]
    placement.write_text(json.dumps(raw), encoding="utf-8")
    fleet = tmp_path / "then.yaml"
    fleet.write_text(RUNNING_FLEET.format(critic="reloaded", rank=64), encoding="utf-8")
    status, out, _ = cli("cluster", str(fleet), "--current", str(placement), "--json")
    assert status == 0 and [entry["current"] for entry in json.loads(out)["placements"]] == ["stays", "stays"]
