"""Small slips of session 75's reviews (helper smallslips21): one rule for the rollout engine a config starts
(``engine_num: 0`` starts none, for the checks as for the reading), ``extra_engine_args``' LoRA keys read as vLLM
0.19.1 reads them, and the cluster's no-room reason naming a counted critic (a kept job's "cheapest way" words are
asserted where they were: test_clusterwhy_s73, test_clusterrest_s74, test_movereason_s72, test_mutants26_s75). The
``--top`` table's critic peaks are main's (test_persona41_s75)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

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
    yarn = {"rope_type": "yarn", "factor": 3.2, "original_max_position_embeddings": 40960, "rope_theta": 1000000}
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
    for engine_num, codes in ((2, [lora, "engine-args-repeated-refused"]), (0, [lora])):
        vllm = read_trinity_config(head + f"explorer: {{rollout_model: {{engine_num: {engine_num}, "
                                   "extra_engine_args: {max_loras: 2}}}\n", "trinity.yaml", {})
        assert ([code.value for code in vllm.note_codes], vllm.vllm_rollout is None) == (codes, engine_num == 0)
    for engine_num, codes in ((2, [lora, "sglang-lora-refused"]), (0, [lora])):
        sglang = read_trinity_config(head + f"explorer: {{rollout_model: {{engine_num: {engine_num}, "
                                     "engine_type: sglang}}\n", "trinity.yaml", {})
        assert [code.value for code in sglang.note_codes] == codes


# 2. extra_engine_args' max_lora_rank and max_loras beside enable_lora, read as vLLM 0.19.1's LoRAConfig reads them
# (pydantic's lax mode: an int of at least 1, and a Literal of the ranks); what it refuses is refused in one line.

LORA_HEAD = ("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
             "model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 8192\n"
             "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n    enable_lora: true\n")
RANKS = "1, 8, 16, 32, 64, 128, 256, 320 or 512"


def _engine_args(arguments: str) -> tuple[tuple[int, int] | None, list[tuple[str, str]]]:
    config = read_trinity_config(LORA_HEAD + f"    extra_engine_args: {arguments}\n", "trinity.yaml", {})
    engine = config.vllm_rollout
    return (None if engine is None else (engine.lora_rank, engine.max_loras),
            [(code.value, words) for words, code in zip(config.notes, config.note_codes, strict=True)])


@pytest.mark.parametrize(("arguments", "read"), [
    ("{max_loras: 4.0}", (16, 4)),  # before, left the engine unchecked
    ("{max_loras: '4'}", (16, 4)),
    ("{max_loras: true}", (16, 1)),
    ("{max_lora_rank: 64.0, max_loras: 2}", (64, 2)),
    ("{max_loras: 5000}", (16, 1024)),  # counted at MAX_LORA_SLOTS: a lower bound
])
def test_what_vllm_takes_is_read(arguments: str, read: tuple[int, int]):
    assert _engine_args(arguments) == (read, [])


def _slots_refused(given: str) -> tuple[str, str]:
    return ("engine-args-lora-refused", (
        f"explorer.rollout_model.extra_engine_args.max_loras {given}: vLLM 0.19.1 takes a whole number of at least 1 "
        "as max_loras (the LoRA adapters each engine holds at once) and fails as the rollout starts: give one, or "
        "remove it (vLLM's default 1)"))


def _rank_refused(given: str, fix: str = "give one of those") -> tuple[str, str]:
    return ("lora-rank-vllm-refused", (
        f"explorer.rollout_model.extra_engine_args.max_lora_rank {given}, which Trinity gives the rollout's vLLM as "
        f"its max_lora_rank: vLLM 0.19.1 takes {RANKS} alone, and fails as the rollout starts: {fix}, or mode: train "
        "where no vLLM rollout starts"))


@pytest.mark.parametrize(("arguments", "lines"), [
    ("{max_loras: 0}", [_slots_refused("0")]),  # before, no line and the engine unchecked
    ("{max_loras: -2}", [_slots_refused("-2")]),
    ("{max_loras: 4.5}", [_slots_refused("4.5")]),
    ("{max_loras: null}", [_slots_refused("null")]),
    ("{max_loras: 'x'}", [_slots_refused("'x'")]),
    ("{max_lora_rank: -8}", [_rank_refused("-8")]),
    ("{max_lora_rank: 0}", [_rank_refused("0")]),
    ("{max_lora_rank: '16'}", [_rank_refused("'16'", "give one of those as a number")]),  # no Literal match from text
    ("{max_lora_rank: 24}", [_rank_refused("24")]),  # the line it had, now with no engine counted
    ("{max_lora_rank: 24, max_loras: 0}", [_rank_refused("24"), _slots_refused("0")]),  # one line each
])
def test_what_vllm_refuses_is_refused_in_one_line_each(arguments: str, lines: list[tuple[str, str]]):
    assert _engine_args(arguments) == (None, lines)  # the engine never starts: no memory of it is checked


def test_engine_args_refusals_only_where_vllm_reads_them():
    without_lora = LORA_HEAD.replace("    enable_lora: true\n", "")
    trained = "mode: train\nbuffer: {batch_size: 16, train_batch_size: 64}\n" + LORA_HEAD
    for head in (without_lora, trained, LORA_HEAD.replace("engine_num: 2", "engine_num: 0")):
        config = read_trinity_config(head + "    extra_engine_args: {max_loras: 0, max_lora_rank: '16'}\n",
                                     "trinity.yaml", {})
        assert list(config.note_codes) == []


# 4. The no-room reason names the PPO critic that sets the room a job needs, as the cluster's other reasons do.

def _fleet_file(tmp_path: Path, jobs: list[dict[str, object]], name: str = "fleet") -> Path:
    path = tmp_path / f"{name}.yaml"
    pool = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
    path.write_text(yaml.safe_dump({"pools": [pool], "jobs": jobs}), encoding="utf-8")
    return path


FIRST = {"name": "first", "model": "Qwen3-8B", "max_model_len": 16384, "priority": 10}
"""A job that takes the node of 8 A100s first (its priority)."""


def _critic_job(name: str, critic: str | None = "resident") -> dict[str, object]:
    job: dict[str, object] = {"name": name, "model": "Qwen3-14B", "max_model_len": 65536}
    return job if critic is None else {**job, "critic": critic}


def test_the_no_room_reason_names_the_critic_that_sets_the_need(cli, tmp_path: Path):
    status, out, _ = cli("cluster", str(_fleet_file(tmp_path, [FIRST, _critic_job("crit")])), "--json")
    [left] = json.loads(out)["unplaced"]
    assert (status, left["reason_code"]) == (1, "no-room")
    assert left["reason"] == (
        "no room left in a100 (it needs at least 8 GPUs of one node, with its PPO critic (resident) counted) after the "
        "jobs placed (the most priority in all, then the jobs earlier in the file where priorities tie, then length, "
        "then cost); first (priority 10) holds the room it needs: "
        "priority 11 is the least that places it")
    assert left["reason_for_several"] == (
        "no room left in a100 (each needs at least 8 GPUs of one node, with each one's PPO critic (resident) counted) "
        "after the jobs placed (the most priority in all, then the jobs earlier in the file where priorities tie, "
        "then length, then cost); first (priority 10) holds the room "
        "each needs: priority 11 is the least that places one of them")
    # Without a critic (4 GPUs are its fewest), beside a first job holding 6 of the 8 (its rollout 4), as they were.
    fleet = _fleet_file(tmp_path, [{**FIRST, "rollout_gpus": 4}, _critic_job("plain", None)], "plain")
    [plain] = json.loads(cli("cluster", str(fleet), "--json")[1])["unplaced"]
    assert plain["reason"] == (
        "no room left in a100 (it needs at least 4 GPUs of one node) after the jobs placed (the most priority in all, "
        "then the jobs earlier in the file where priorities tie, then length, then cost); first (priority 10) holds "
        "the room it needs: priority 11 is the least that places it")
