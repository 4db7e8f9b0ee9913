"""Small slips of session 75's reviews (helper smallslips21): one rule for the rollout engine a config starts
(``engine_num: 0`` starts none, for the checks as for the reading), ``extra_engine_args``' LoRA keys read as vLLM
0.19.1 reads them, the ``--top`` table's memory column naming a PPO critic's tighter peak, and the cluster's reasons
naming the critic and the cheapest way."""

from __future__ import annotations

import pytest

from solver.tables import load_catalog
from solver.trinity import read_trinity_config, trinity_config_problems
from solver.trinity.keys import started_rollout_engine

# 1. The rollout engine a config starts: one rule (mode, engine_type, engine_num) for the checks and the reading.

ROPE_MISSING_CODES = {"vllm": ["rope-scaling-missing-refused"],
                      "sglang": ["rope-scaling-missing", "sglang-length-refused"], None: ["rope-scaling-missing"]}
"""Qwen3-4B at 131072 tokens with no model.rope_scaling: vLLM refuses the length, sglang too (and the trainer's line),
and with no rollout engine only the trainer's line is left."""


def _qwen_codes(rollout: dict[str, object], mode: str = "both", model_keys: dict[str, object] | None = None
                ) -> list[str]:
    mapping = {"mode": mode, "model": {"model_path": "x", "max_model_len": 131072, **(model_keys or {})},
               "explorer": {"rollout_model": rollout}}
    return [problem.code.value for problem in trinity_config_problems(mapping, load_catalog().model("Qwen3-4B"), 8)]


@pytest.mark.parametrize(("rollout", "mode", "engine"), [
    ({}, "both", "vllm"),
    ({"engine_num": 2, "engine_type": "vllm_async"}, "both", "vllm"),
    ({"engine_type": "sglang"}, "explore", "sglang"),
    ({"engine_num": 0}, "both", None),  # before, the vLLM checks ran for it
    ({"engine_num": "0"}, "both", None),  # OmegaConf's int field reads the text 0
    ({"engine_num": 0, "engine_type": "sglang"}, "both", None),  # before, sglang's check ran for it
    ({"engine_type": "sglang"}, "train", None),
])
def test_engine_num_0_starts_no_rollout_engine_for_the_checks(rollout: dict[str, object], mode: str,
                                                              engine: str | None):
    assert _qwen_codes(rollout, mode) == ROPE_MISSING_CODES[engine]


def test_a_rollout_rope_scaling_of_its_own_is_not_judged_without_an_engine():
    yarn = {"rope_type": "yarn", "factor": 3.2, "original_max_position_embeddings": 40960}
    own = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 40960}
    assert _qwen_codes({"engine_num": 1, "rope_scaling": own}, model_keys={"rope_scaling": yarn}) == [
        "rollout-rope-scaling-differs"]
    assert _qwen_codes({"engine_num": 0, "rope_scaling": own}, model_keys={"rope_scaling": yarn}) == []


@pytest.mark.parametrize(("values", "engine"), [
    ({}, "vllm"),
    ({"engine_type": "vllm_async", "engine_num": 3}, "vllm"),
    ({"engine_type": "sglang"}, "sglang"),
    ({"engine_type": "external"}, "external"),
    ({"engine_num": 0}, None),
    ({"mode": "train"}, None),
    ({"mode": "explore", "engine_num": None}, "vllm"),  # unset or unreadable: not taken for 0
])
def test_the_one_rule(values: dict[str, object], engine: str | None):
    def word(path: tuple[str, ...]) -> object:
        return values.get(path[-1])

    def whole(path: tuple[str, ...]) -> float | None:
        assert path == ("explorer", "rollout_model", "engine_num")
        number = values.get("engine_num")
        assert number is None or isinstance(number, int)
        return number

    assert started_rollout_engine(word, whole) == engine


def test_engine_num_0_starts_no_rollout_engine_for_the_reading() -> None:
    # the same rule where the config is read: no vLLM engine's memory, no LoRA line of an engine that never starts
    head = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
            "model: {model_path: Qwen/Qwen3-8B, max_model_len: 8192, lora_configs: [{lora_rank: 16}]}\n")
    lora = "lora-counted-as-full"  # the note on LoRA's count, whatever the rollout
    for engine_num, codes in ((2, [lora, "engine-args-lora-refused"]), (0, [lora])):
        vllm = read_trinity_config(head + f"explorer: {{rollout_model: {{engine_num: {engine_num}, "
                                   "extra_engine_args: {max_loras: 2}}}\n", "trinity.yaml", {})
        assert ([code.value for code in vllm.note_codes], vllm.vllm_rollout is None) == (codes, engine_num == 0)
    for engine_num, codes in ((2, [lora, "sglang-lora-refused"]), (0, [lora])):
        sglang = read_trinity_config(head + f"explorer: {{rollout_model: {{engine_num: {engine_num}, "
                                     "engine_type: sglang}}\n", "trinity.yaml", {})
        assert [code.value for code in sglang.note_codes] == codes
