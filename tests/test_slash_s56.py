"""A path ending in "/" that Trinity's trainer loads (session 56): verl's copy_to_local asserts ``src[-1] != "/"``
before it tells a local path from an HDFS one (``verl/utils/fs.py:238`` in verl 0.7.0, 0.7.1 and 0.8.0), and Trinity
passes the paths on as written, so ``--from-config`` refuses ``model.model_path: /models/Qwen3-8B/`` for every
release, and says where only some releases fail (``trailing-slash``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

CONFIG = ("model:\n  model_path: {path}\n  max_model_len: 16384\n{model}algorithm: {{algorithm_type: {algorithm}}}\n"
          "cluster: {{node_num: 1, gpu_per_node: 8}}\nbuffer: {{train_batch_size: 64}}\n"
          "explorer: {{rollout_model: {{engine_num: 4}}}}\n{trainer}")
"""Qwen3-8B at 16384 tokens on 4 trainer GPUs of 8; `model` adds keys under ``model``, `trainer` a ``trainer``."""
ASSERTS = ("the trainer's worker loads it through verl's copy_to_local, which asserts that a path does not end in "
           "\"/\", so the trainer fails as it starts")
FIX = "write the path without its trailing \"/\" (--write leaves it to you)"
ADAPTER = "trainer.trainer_config.actor_rollout_ref.model.lora_adapter_path"
TRAINER_ADAPTER = "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {{lora_adapter_path: {path}}}\n"


def _write(tmp_path: Path, path: str = "Qwen/Qwen3-8B", model: str = "", algorithm: str = "grpo",
           trainer: str = "") -> Path:
    config = tmp_path / "trinity.yaml"
    config.write_text(CONFIG.format(path=path, model=model, algorithm=algorithm, trainer=trainer), encoding="utf-8")
    return config


def _answer(cli, config: Path, *flags: str) -> dict[str, Any]:
    """`--from-config`'s JSON answer on `config` on H100 80GB, with `flags`."""
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json", *flags)
    assert status == 0
    answer: dict[str, Any] = json.loads(out)[0]
    return answer


def _slash_lines(current: dict[str, Any]) -> list[tuple[str, str]]:
    """The (code, words) of `current`'s lines on a trailing slash."""
    return [(code, words) for code, words in zip(current["config_problem_codes"], current["config_problems"])
            if code.startswith("trailing-slash")]


@pytest.mark.parametrize("version", [(), ("--trinity-version", "0.5"), ("--trinity-version", "0.6")])
@pytest.mark.parametrize("path", ["/models/Qwen3-8B/", "Qwen/Qwen3-8B/", "/models/Qwen3-8B//"])
def test_a_model_path_ending_in_a_slash_is_refused_with_every_release(
        cli, tmp_path: Path, path: str, version: tuple[str, ...]):
    answer = _answer(cli, _write(tmp_path, path=path), *version)
    # The model is still named by its last folder.
    assert answer["model"] == "Qwen3-8B"
    assert answer["current"]["refused"] is True
    assert _slash_lines(answer["current"]) == [("trailing-slash-refused", (
        f"model.model_path ends in \"/\": {ASSERTS}, with every Trinity release and verl version: {FIX}"))]


@pytest.mark.parametrize("path", ["/models/Qwen3-8B", "Qwen/Qwen3-8B", "'C:\\models\\Qwen3-8B\\'"])
def test_a_model_path_without_a_trailing_slash_gets_no_line(cli, tmp_path: Path, path: str):
    # verl asserts only against "/": a Windows separator at the end is not its concern.
    current = _answer(cli, _write(tmp_path, path=path))["current"]
    assert (_slash_lines(current), current["refused"]) == ([], False)


def test_the_model_path_from_an_environment_variable_is_read_as_interpolated(cli, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("SLASHED_MODEL", "/models/Qwen3-8B/")
    answer = _answer(cli, _write(tmp_path, path="${oc.env:SLASHED_MODEL}"))
    assert answer["model"] == "Qwen3-8B"
    assert [code for code, _ in _slash_lines(answer["current"])] == ["trailing-slash-refused"]


@pytest.mark.parametrize(("path", "status"), [("/models/Qwen3-8B/", 1), ("/models/Qwen3-8B", 0)])
def test_check_fails_on_a_model_path_ending_in_a_slash(cli, tmp_path: Path, monkeypatch, path: str, status: int):
    # At 4096 tokens the config's vanilla on 4 H100s trains: the slash alone fails it.
    for variable in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        monkeypatch.delenv(variable, raising=False)
    config = _write(tmp_path, path=path)
    config.write_text(config.read_text(encoding="utf-8").replace("16384", "4096"), encoding="utf-8")
    checked, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check")
    assert checked == status
    assert ("  refused: model.model_path ends in \"/\": " in out) is bool(status)


def test_write_keeps_the_slash_and_says_so(cli, tmp_path: Path):
    config = _write(tmp_path, path="/models/Qwen3-8B/")
    written = tmp_path / "out.yaml"
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))
    assert status == 0
    assert "  model_path: /models/Qwen3-8B/\n" in written.read_text(encoding="utf-8")
    assert "(--write leaves it to you)" in " ".join(out.split())
    # The file written is refused as its source was.
    assert [code for code, _ in _slash_lines(_answer(cli, written)["current"])] == ["trailing-slash-refused"]


@pytest.mark.parametrize(("algorithm", "said"), [("ppo", True), ("grpo", False)])
def test_a_critic_model_path_ending_in_a_slash_is_refused_where_a_critic_is_trained(
        cli, tmp_path: Path, algorithm: str, said: bool):
    config = _write(tmp_path, model="  critic_model_path: /models/critic/\n", algorithm=algorithm)
    expected = [("trailing-slash-refused", (
        f"model.critic_model_path ends in \"/\": {ASSERTS}, with every Trinity release and verl version: {FIX}"))]
    assert _slash_lines(_answer(cli, config)["current"]) == (expected if said else [])


@pytest.mark.parametrize("version", [(), ("--trinity-version", "0.5"), ("--trinity-version", "0.6")])
@pytest.mark.parametrize("rank", ["", ", lora_rank: 8", ", lora_rank: '16'"])
def test_a_lora_config_path_ending_in_a_slash_is_refused_at_a_rank_above_0(
        cli, tmp_path: Path, rank: str, version: tuple[str, ...]):
    # Its default rank is 32 (LoRAConfig): verl 0.8's engine loads the adapter too.
    config = _write(tmp_path, model=f"  lora_configs: [{{path: adapters/mine/{rank}}}]\n")
    assert _slash_lines(_answer(cli, config, *version)["current"]) == [("trailing-slash-refused", (
        f"model.lora_configs[0].path ends in \"/\": {ASSERTS}, with every Trinity release and verl version: {FIX}"))]


@pytest.mark.parametrize(("version", "line"), [
    (("--trinity-version", "0.5"), ("trailing-slash-refused", f"{ASSERTS}, with Trinity 0.5: {FIX}")),
    (("--trinity-version", "0.6"), ("trailing-slash", (
        f"{ASSERTS}, with verl before 0.8; Trinity 0.6 on verl 0.8 or later loads no adapter at a lora_rank not above "
        f"0; {FIX}"))),
    ((), ("trailing-slash", (
        f"{ASSERTS}, with verl before 0.8; Trinity 0.6 on verl 0.8 or later loads no adapter at a lora_rank not above "
        f"0; {FIX}")))])
def test_a_lora_config_path_at_rank_0_fails_only_before_verl_08(
        cli, tmp_path: Path, version: tuple[str, ...], line: tuple[str, str]):
    config = _write(tmp_path, model="  lora_configs: [{path: adapters/mine/, lora_rank: 0}]\n")
    code, words = line
    current = _answer(cli, config, *version)["current"]
    assert _slash_lines(current) == [(code, f"model.lora_configs[0].path ends in \"/\": {words}")]
    # The rollout's vLLM is given max_lora_rank 0 at rank 0, which refuses the config whatever the release
    # (test_lorarest3_s75); the slash alone refuses it with Trinity 0.5.
    assert "lora-rank-vllm-refused" in current["config_problem_codes"] and current["refused"] is True


@pytest.mark.parametrize(("version", "line"), [
    (("--trinity-version", "0.5"), ("trailing-slash-refused", f"{ASSERTS}, with Trinity 0.5: {FIX}")),
    (("--trinity-version", "0.6"), ("trailing-slash", (
        f"{ASSERTS}, with verl before 0.8; Trinity 0.6 on verl 0.8 or later ignores the key; {FIX}"))),
    ((), ("trailing-slash", (
        f"{ASSERTS}, with verl before 0.8; Trinity 0.6 on verl 0.8 or later ignores the key; {FIX}")))])
def test_an_adapter_path_ending_in_a_slash_fails_where_verl_before_08_reads_it(
        cli, tmp_path: Path, version: tuple[str, ...], line: tuple[str, str]):
    config = _write(tmp_path, trainer=TRAINER_ADAPTER.format(path="adapters/mine/"))
    code, words = line
    current = _answer(cli, config, *version)["current"]
    assert _slash_lines(current) == [(code, f"{ADAPTER} ends in \"/\": {words}")]
    assert current["refused"] is (code == "trailing-slash-refused")


@pytest.mark.parametrize(("model", "adapter", "keys"), [
    ("", "adapters/mine", []),
    # A LoRA config without a path is a dummy, which leaves the key; one with a path replaces it.
    ("  lora_configs: [{lora_rank: 32}]\n", "adapters/mine/", [ADAPTER]),
    ("  lora_configs: [{path: adapters/other}]\n", "adapters/mine/", []),
    ("  lora_configs: [{path: adapters/other/}]\n", "adapters/mine/", ["model.lora_configs[0].path"])])
def test_only_the_adapter_path_the_worker_loads_is_said(cli, tmp_path: Path, model: str, adapter: str,
                                                        keys: list[str]):
    config = _write(tmp_path, model=model, trainer=TRAINER_ADAPTER.format(path=adapter))
    lines = _slash_lines(_answer(cli, config, "--trinity-version", "0.5")["current"])
    assert [words.split(" ends in ")[0] for _, words in lines] == keys
