"""An SGLang engine's tensor and data parallel sizes (session 75, sglangdp): Trinity 0.6.0 refuses an SGLang engine
whose ``tensor_parallel_size`` is not a multiple of its ``data_parallel_size``, for any engine size
(``_validate_multinode_inference_models``, ``common/config_validator.py:341-349``; both sizes default to 1,
``common/config.py:522-523``), which ``--check`` passed: now `sglang-parallel-refused`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from solver.tables import load_catalog
from solver.trinity import trinity_config_problems

CATALOG = load_catalog()
CODE = "sglang-parallel-refused"
Cli = Callable[..., tuple[int, str, str]]

ROLLOUT_2_OF_4 = ("explorer.rollout_model: the SGLang engine's tensor_parallel_size 2 is not a multiple of its "
                  "data_parallel_size 4: Trinity 0.6 refuses the config as it loads it; set data_parallel_size to 1 "
                  "or 2 (a divisor of 2), or tensor_parallel_size to a multiple of 4")


def _sglang_problems(explorer: dict[str, Any], version: Any = None, node_gpus: int | None = 8) -> list[str]:
    """The `sglang-parallel-refused` lines of the API's checks on a GRPO config of Qwen3-8B with `explorer`, on
    nodes of `node_gpus` (None: no ``cluster``)."""
    mapping: dict[str, Any] = {"algorithm": {"algorithm_type": "grpo"}, "model": {"model_path": "Qwen/Qwen3-8B"},
                               "explorer": explorer}
    if node_gpus is not None:
        mapping["cluster"] = {"node_num": 4, "gpu_per_node": node_gpus}
    problems = trinity_config_problems(mapping, CATALOG.model("Qwen3-8B"), 8, max_model_len=16384, version=version)
    return [problem.words for problem in problems if problem.code.value == CODE]


def test_an_sglang_rollout_whose_tp_is_no_multiple_of_its_dp_is_refused_whatever_its_size():
    explorer = {"rollout_model": {"engine_type": "sglang", "tensor_parallel_size": 2, "data_parallel_size": 4}}
    assert _sglang_problems(explorer) == [ROLLOUT_2_OF_4]  # 8 GPUs: within a node, yet refused
    assert _sglang_problems(explorer, version="0.6") == [ROLLOUT_2_OF_4]
    assert _sglang_problems(explorer, node_gpus=None) == [ROLLOUT_2_OF_4]  # the rule needs no node size
    assert _sglang_problems(explorer, node_gpus=1) == [ROLLOUT_2_OF_4]  # nor is it the across-nodes rule alone


def test_unset_sizes_are_1_and_each_auxiliary_sglang_engine_is_judged():
    explorer = {"rollout_model": {"engine_type": "sglang", "data_parallel_size": 2},
                "auxiliary_models": [{"model_path": "Qwen/Qwen3-32B", "engine_type": "sglang",
                                      "tensor_parallel_size": 6, "data_parallel_size": 4},
                                     {"model_path": "Qwen/Qwen3-32B", "engine_type": "sglang",
                                      "tensor_parallel_size": 4, "data_parallel_size": 2}]}
    unset = ("explorer.rollout_model: the SGLang engine's tensor_parallel_size 1 (unset) is not a multiple of its "
             "data_parallel_size 2: Trinity 0.6 refuses the config as it loads it; set data_parallel_size to 1 (a "
             "divisor of 1), or tensor_parallel_size to a multiple of 2")
    auxiliary = ("explorer.auxiliary_models[0]: the SGLang engine's tensor_parallel_size 6 is not a multiple of its "
                 "data_parallel_size 4: Trinity 0.6 refuses the config as it loads it; set data_parallel_size to 1, 2, "
                 "3 or 6 (a divisor of 6), or tensor_parallel_size to a multiple of 4")
    assert _sglang_problems(explorer) == [unset, auxiliary]


@pytest.mark.parametrize("engine", [
    {"engine_type": "sglang", "tensor_parallel_size": 4, "data_parallel_size": 2},  # a multiple
    {"engine_type": "sglang", "tensor_parallel_size": 3},  # data_parallel_size 1 divides every size
    {"tensor_parallel_size": 2, "data_parallel_size": 4},  # vLLM's (the default engine): not its rule
    {"engine_type": "vllm", "tensor_parallel_size": 2, "data_parallel_size": 4},
    {"engine_type": "SGLang", "tensor_parallel_size": 2, "data_parallel_size": 4},  # Trinity asks for "sglang" alone
    {"engine_type": "tinker", "tensor_parallel_size": 2, "data_parallel_size": 4},  # runs elsewhere
    {"engine_type": "external", "tensor_parallel_size": 2, "data_parallel_size": 4},
])
def test_engines_the_rule_does_not_refuse_pass(engine: dict[str, Any]):
    assert _sglang_problems({"rollout_model": engine}) == []


def test_trinity_0_5_has_no_such_rule():
    # trinity-rft 0.5.2 has neither an SGLang engine nor data_parallel_size (its own line says so)
    explorer = {"rollout_model": {"engine_type": "sglang", "tensor_parallel_size": 2, "data_parallel_size": 4}}
    assert _sglang_problems(explorer, version="0.5") == []


def _config(tmp_path: Path, tensor: int, data: int) -> Path:
    """A GRPO config of Qwen3-8B at 16384 tokens on 2 nodes of 8, its rollout one SGLang engine of `tensor` x `data`
    GPUs."""
    config = tmp_path / "sglang.yaml"
    config.write_text("mode: both\nalgorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 32}\n"
                      "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
                      "cluster: {node_num: 2, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_type: sglang, "
                      f"tensor_parallel_size: {tensor}, data_parallel_size: {data}}}}}\n", encoding="utf-8")
    return config


def test_check_exits_1_on_the_refused_sizes_and_0_on_a_multiple(cli: Cli, tmp_path: Path):
    status, out, _ = cli("--from-config", str(_config(tmp_path, 2, 4)), "--gpu", "h100", "--check", "--json")
    [answer] = json.loads(out)
    current = answer["current"]
    assert (status, current["refused"], current["config_problem_codes"]) == (1, True, [CODE])
    assert current["config_problems"] == [ROLLOUT_2_OF_4]
    status, out, _ = cli("--from-config", str(_config(tmp_path, 4, 2)), "--gpu", "h100", "--check", "--json")
    [answer] = json.loads(out)
    assert (status, answer["current"]["refused"], answer["current"]["config_problem_codes"]) == (0, False, [])


def test_check_prints_the_refused_line(cli: Cli, tmp_path: Path):
    status, out, _ = cli("--from-config", str(_config(tmp_path, 2, 4)), "--gpu", "h100", "--check")
    assert status == 1
    assert ("  refused: explorer.rollout_model: the SGLang engine's tensor_parallel_size 2 is not a multiple of its "
            "data_parallel_size 4: Trinity 0.6 refuses the config as\n") in out
