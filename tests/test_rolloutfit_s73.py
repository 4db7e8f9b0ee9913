"""A Trinity config's own vLLM rollout engine checked against the GPU type (session 73): where its
tensor_parallel_size cannot hold the weights and one sequence's KV cache within gpu_memory_utilization, a
`rollout-engine-memory-refused` line names the size the memory model sizes engines at (`rollout_engines`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.api import answer_query, config_query, with_config_verdicts
from solver.memory import GIB, rollout_engine, rollout_engines
from solver.results import RolloutEngines
from solver.tables import load_catalog
from solver.trinity import read_trinity_config, trinity_config_problems

CATALOG = load_catalog()
CODE = "rollout-engine-memory-refused"


def _config(tmp_path: Path, model: str, rollout: str, length: int = 8192, gpus: int = 8, head: str = "") -> Path:
    """A GRPO config (no critic line) training `model` at `length` on a node of `gpus`, with `rollout` as its
    ``explorer.rollout_model`` (flow mapping text)."""
    config = tmp_path / "trinity.yaml"
    config.write_text(f"{head}algorithm: {{algorithm_type: grpo}}\n"
                      f"model: {{model_path: Qwen/{model}, max_model_len: {length}}}\n"
                      f"cluster: {{node_num: 1, gpu_per_node: {gpus}}}\n"
                      f"explorer: {{rollout_model: {{{rollout}}}}}\n", encoding="utf-8")
    return config


def _current(cli: Callable[..., tuple[int, str, str]], config: Path, *options: str) -> dict[str, Any]:
    """The JSON verdict on `config` (`--json`), stderr empty."""
    status, out, err = cli("--from-config", str(config), "--json", *options)
    assert (status, err) == (0, "")
    [answer] = json.loads(out)
    current: dict[str, Any] = answer["current"]
    return current


QWEN3_14B_TP1 = (
    "explorer.rollout_model.tensor_parallel_size 1: Qwen3-14B's 16-bit weights (27.5 GiB) and one 8192-token "
    "sequence's KV cache (1.2 GiB) per GPU take more than what vLLM takes of one RTX-4090-24GB (20.6 GiB: Trinity's "
    "default gpu_memory_utilization 0.9 of its 24.0 GiB, less 1 GiB for the CUDA context), so the rollout's vLLM "
    "fails as it loads; set it to 4, the smallest size that suits the heads and holds them in half of that (6.9 + "
    "0.3 GiB of 20.6), leaving the rest to sequences in flight, as rft-solver sizes a fragment's engines (each of "
    "explorer.rollout_model.engine_num's engines then takes 4 GPUs of the cluster)")


def test_qwen3_14b_at_tensor_parallel_size_1_on_4090s_is_refused_naming_the_size_emit_gives(cli, tmp_path: Path):
    # 14.8B bf16 parameters are 27.5 GiB, more than the 24 GiB x 0.9 - 1 = 20.6 GiB vLLM takes of a 4090: refused.
    # Size 2 would load (13.8 + 0.6 GiB), but takes more than half; 4 (6.9 + 0.3 GiB) is what --emit gives.
    current = _current(cli, _config(tmp_path, "Qwen3-14B", "engine_num: 4, tensor_parallel_size: 1"), "--gpu", "4090")
    assert current["config_problems"] == [QWEN3_14B_TP1]
    assert (current["config_problem_codes"], current["refused"]) == ([CODE], True)
    model, memory = CATALOG.model("Qwen3-14B"), CATALOG.gpu("RTX-4090-24GB").memory_gib
    assert f"{2 * model.parameters_b * 1e9 / GIB:.1f}" == "27.5" and f"{memory * 0.9 - 1:.1f}" == "20.6"
    assert rollout_engines(model, memory, 8, 8192, 8).size == 4
    assert rollout_engine(model, memory, 2, 8192, largest=False).holds  # loads, but not within half of the room
    assert not rollout_engine(model, memory, 2, 8192, largest=False).fits


@pytest.mark.parametrize(("model", "size"), [("Qwen3-14B", 4), ("Qwen3-14B", 2), ("Qwen3-0.6B", 1)])
def test_engines_whose_gpus_hold_the_model_get_no_line(cli, tmp_path: Path, model: str, size: int):
    # Qwen3-14B at 4 and 2 (which loads, with little room: not refused), Qwen3-0.6B at 1 (1.1 GiB of weights).
    current = _current(cli, _config(tmp_path, model, f"engine_num: 1, tensor_parallel_size: {size}"), "--gpu", "4090")
    assert (current["config_problems"], current["config_problem_codes"], current["refused"]) == ([], [], False)


def test_check_exits_1_on_the_rollout_alone_with_its_utilization_and_dtype_in_the_words(cli, tmp_path: Path):
    # Qwen3-0.6B's trainer trains on 2 of 4 4090s; its rollout in float32 (2.2 + 0.9 GiB per GPU) within
    # gpu_memory_utilization 0.1 (24 x 0.1 - 1 = 1.4 GiB) does not load. Size 4, the largest in the node, holds
    # 0.6 + 0.2 GiB but not within half: the words say so.
    rollout = "engine_num: 2, tensor_parallel_size: 1, dtype: float32"
    config = _config(tmp_path, "Qwen3-0.6B", f"{rollout}, gpu_memory_utilization: 0.1", length=4096, gpus=4)
    status, out, err = cli("--from-config", str(config), "--gpu", "4090", "--check")
    assert (status, err) == (1, "")
    assert "  refused: explorer.rollout_model.tensor_parallel_size 1: Qwen3-0.6B's 32-bit weights (2.2 GiB)" in out
    [line] = _current(cli, config, "--gpu", "4090")["config_problems"]
    assert line.endswith(
        "(1.4 GiB: its gpu_memory_utilization 0.1 of its 24.0 GiB, less 1 GiB for the CUDA context), so the rollout's "
        "vLLM fails as it loads; 4, the largest size that suits the heads in a node of 4 GPUs, holds them (0.6 + 0.2 "
        "GiB of 1.4) with less than half left to sequences in flight: set it to 4, or give the rollout GPUs with more "
        "memory")
    assert cli("--from-config", str(_config(tmp_path, "Qwen3-0.6B", rollout, length=4096, gpus=4)), "--gpu", "4090",
               "--check")[0] == 0  # at the default 0.9 it loads: the trainer's verdict alone decides
    [line] = _current(cli, _config(tmp_path, "Qwen3-0.6B", f"{rollout}, gpu_memory_utilization: 0.05", length=4096,
                                   gpus=4), "--gpu", "4090")["config_problems"]
    assert line.endswith("; no size that suits the heads in a node of 4 GPUs holds them (4: 0.6 + 0.2 GiB of 0.2): "
                         "give the rollout GPUs with more memory, or a shorter length")


def test_a_gpu_type_of_your_own_is_checked_at_its_memory(cli, tmp_path: Path):
    # --gpu-memory 16: 16 x 0.9 - 1 = 13.4 GiB, less than Qwen3-8B's 15.3 GiB of bf16 weights; 4 holds 3.8 + 0.1.
    config = _config(tmp_path, "Qwen3-8B", "engine_num: 2, tensor_parallel_size: 1", length=4096, gpus=4)
    status, out, err = cli("--from-config", str(config), "--gpu", "my-16g", "--gpu-memory", "16", "--json")
    [current] = [answer["current"] for answer in json.loads(out)]
    assert status == 0 and err.count("\n") == 1 and err.startswith("solve: note: --gpu-memory 16GB is taken as 16 GiB")
    assert current["config_problem_codes"] == [CODE] and current["config_problems"][0].startswith(
        "explorer.rollout_model.tensor_parallel_size 1: Qwen3-8B's 16-bit weights (15.3 GiB) and one 4096-token "
        "sequence's KV cache (0.6 GiB) per GPU take more than what vLLM takes of one my-16g (13.4 GiB: Trinity's "
        "default gpu_memory_utilization 0.9 of its 16.0 GiB, less 1 GiB for the CUDA context), so the rollout's vLLM "
        "fails as it loads; set it to 4, the smallest size that suits the heads and holds them in half of that (3.8 + "
        "0.1 GiB of 13.4)")


def test_the_rollout_s_own_length_is_the_one_checked(cli, tmp_path: Path):
    # Qwen3-8B on a 4090: 15.3 GiB of weights and 4096 tokens' 0.6 GiB load; the rollout's own 40960 tokens
    # (144 KiB a token: 5.6 GiB) do not.
    config = _config(tmp_path, "Qwen3-8B", "engine_num: 2, tensor_parallel_size: 1, max_model_len: 40960",
                     length=4096, gpus=4)
    [line] = _current(cli, config, "--gpu", "4090")["config_problems"]
    assert "Qwen3-8B's 16-bit weights (15.3 GiB) and one 40960-token sequence's KV cache (5.6 GiB)" in line
    assert _current(cli, _config(tmp_path, "Qwen3-8B", "engine_num: 2", length=4096, gpus=4),
                    "--gpu", "4090")["config_problems"] == []


@pytest.mark.parametrize(("rollout", "head"), [
    ("engine_num: 1, tensor_parallel_size: 1, pipeline_parallel_size: 2", ""),
    ("engine_num: 1, tensor_parallel_size: 1, enable_expert_parallel: true", ""),
    ("engine_num: 1, tensor_parallel_size: 1, gpu_memory_utilization: 1.5", ""),
    ("engine_num: 1", "mode: train\n"),
    ("engine_num: 0", ""),
    ("engine_num: 1, engine_type: tinker", ""),
])
def test_engines_split_otherwise_out_of_range_or_absent_are_not_checked(tmp_path: Path, rollout: str, head: str):
    config = _config(tmp_path, "Qwen3-14B", rollout, head=head)
    assert read_trinity_config(config.read_text(encoding="utf-8"), "trinity.yaml", {}).vllm_rollout is None


def test_the_api_gives_the_line_on_each_gpu_type_asked():
    # Through the API: refused on the 4090, not on an H100 (70.7 GiB holds 27.5 + 1.2 GiB).
    text = "algorithm: {algorithm_type: grpo}\nmodel: {model_path: Qwen/Qwen3-14B, max_model_len: 8192}\n" \
           "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n"
    config = read_trinity_config(text, "trinity.yaml", {})
    query = config_query(CATALOG, config, gpu=("4090", "h100"))
    answers = with_config_verdicts(answer_query(query, CATALOG), query, CATALOG, config, text, "trinity.yaml", {})
    assert [(answer.gpu, answer.current and answer.current.config_problems[0].replace("trinity.yaml", ""))
            for answer in answers if answer.current and answer.current.config_problems] == [
        ("RTX-4090-24GB", QWEN3_14B_TP1)]
    assert [answer.current.refused for answer in answers if answer.current] == [True, False]


def test_an_engine_holds_up_to_all_of_its_room_and_float32_doubles_what_it_holds():
    assert RolloutEngines(size=1, weights_gib=15.0, kv_cache_gib=5.0, room_gib=20.0, largest=False).holds
    assert not RolloutEngines(size=1, weights_gib=15.0, kv_cache_gib=5.01, room_gib=20.0, largest=False).holds
    model = CATALOG.model("Qwen3-0.6B")
    half, whole = (rollout_engine(model, 24.0, 2, 4096, largest=False, value_bytes=size) for size in (2, 4))
    assert (whole.weights_gib, whole.kv_cache_gib) == (2 * half.weights_gib, 2 * half.kv_cache_gib)
    assert rollout_engine(model, 24.0, 1, 4096, largest=False, utilization=0.01).room_gib == 0.0


def test_a_misspelt_memory_share_is_named_now_that_it_is_read():
    [problem] = trinity_config_problems({"explorer": {"rollout_model": {"gpu_memory_utilisation": 0.5}}},
                                        CATALOG.model("Qwen3-8B"), 8)
    assert problem.words.startswith("explorer.rollout_model.gpu_memory_utilisation: did you mean "
                                    "gpu_memory_utilization? That key is unset")
