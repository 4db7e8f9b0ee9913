"""An ML infra engineer's CI gate (session 80, persona59): every training config PR runs ``solve --from-config
CONFIG --gpu h20 --check`` (and ``--json``), fails the PR where the config would not train, and posts the suggested
change. Pinned here: the exit status (0 trains, 1 does not or is refused, 2 bad input in one line) agrees with the
JSON's ``current.trains``, ``current.refused`` and ``plans``; ``--write``'s copy then passes ``--check``; a config's
own lowered budget is kept (no key changed); and the Python API in one process gives the same verdicts."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

import solver
from solver.api import answer_query, config_query, with_config_verdicts
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
FITS = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 96}
model: {model_path: Qwen/Qwen3-8B, max_prompt_tokens: 2048, max_response_tokens: 30720, max_model_len: 32768}
cluster: {node_num: 1, gpu_per_node: 8}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
trainer:
  ulysses_sequence_parallel_size: 2
  max_token_len_per_gpu: 16384
"""
NO_FIT = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 32}
model: {model_path: Qwen/Qwen3-8B, max_prompt_tokens: 1024, max_response_tokens: 15360, max_model_len: 16384}
cluster: {node_num: 1, gpu_per_node: 4}
explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}
trainer: {trainer_config: {actor_rollout_ref: {actor: {ppo_max_token_len_per_gpu: 32768}}}}
"""
REFUSED = """\
mode: train
algorithm: {algorithm_type: dpo}
buffer: {batch_size: 32}
model: {model_path: Qwen/Qwen3-14B, max_model_len: 65536}
cluster: {node_num: 1, gpu_per_node: 2}
"""
MALFORMED = """\
model:
  model_path: Qwen/Qwen3-4B
  max_model_len: 32768
   rope_scaling: {rope_type: yarn, factor: 2.0
"""


@pytest.fixture(autouse=True)
def _env_off(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_HIP_ALLOC_CONF", "PYTORCH_ALLOC_CONF"):
        monkeypatch.delenv(name, raising=False)


def _config(tmp_path: Path, text: str, name: str = "ci.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("text", "status", "trains", "refused", "plans"), [
    (FITS, 0, True, False, 1), (NO_FIT, 1, False, False, 1), (REFUSED, 1, False, True, 0)])
def test_check_exit_status_agrees_with_its_json(cli: Cli, tmp_path: Path, text: str, status: int, trains: bool,
                                                refused: bool, plans: int) -> None:
    config = _config(tmp_path, text)
    said, _, _ = cli("--from-config", str(config), "--gpu", "h20", "--check")
    given, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json")
    (answer,) = json.loads(out)
    current = answer["current"]
    assert (said, given) == (status, status)
    assert (current["trains"], current["refused"], len(answer["plans"])) == (trains, refused, plans)
    assert int(not answer["plans"] or not current["trains"] or current["refused"]) == status


def test_malformed_config_is_one_line_exit_2_and_no_json(cli: Cli, tmp_path: Path) -> None:
    config = _config(tmp_path, MALFORMED)
    status, out, err = cli("--from-config", str(config), "--gpu", "h20", "--check", "--json")
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --from-config {config}: line 4: malformed YAML: mapping values are not allowed "
                   "here\n")


def test_written_copy_passes_check(cli: Cli, tmp_path: Path) -> None:
    config, written = _config(tmp_path, NO_FIT), tmp_path / "patched.yaml"
    assert cli("--from-config", str(config), "--gpu", "h20", "--write", str(written))[0] == 0
    status, out, _ = cli("--from-config", str(written), "--gpu", "h20", "--check", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["current"]["sp"], answer["current"]["trains"]) == (0, 2, True)
    assert ("trainer: {trainer_config: {actor_rollout_ref: {actor: {ppo_max_token_len_per_gpu: 16384}}}, "
            "ulysses_sequence_parallel_size: 2, max_token_len_per_gpu: 16384}\n") in written.read_text()


def test_own_lowered_budget_is_kept_and_nothing_changes(cli: Cli, tmp_path: Path) -> None:
    config = _config(tmp_path, FITS)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--check")
    assert status == 0
    assert ("token budget   max_token_len_per_gpu = 16384 (capped by the config's own max_token_len_per_gpu, "
            "below Trinity's default, ceil(2 x 32768 / SP 2) = 32768;") in out
    assert "ci.yaml has these keys already: --write FILE writes a copy that differs in its" in out
    (answer,) = json.loads(cli("--from-config", str(config), "--gpu", "h20", "--check", "--json")[1])
    assert (answer["plans"][0]["token_budget_cap"], answer["current"]["max_token_len_per_gpu"]) == (16384, 16384)


def test_one_process_batch_gives_check_verdicts() -> None:
    catalog = solver.load_catalog()
    verdicts = []
    for text in (FITS, NO_FIT, REFUSED):
        config = read_trinity_config(text, "ci.yaml", os.environ)
        query = config_query(catalog, config, gpu="h20")
        (answer,) = with_config_verdicts(answer_query(query, catalog), query, catalog, config, text, "ci.yaml",
                                         os.environ)
        assert answer.current is not None
        verdicts.append((bool(answer.plans), answer.current.trains, answer.current.refused))
    assert verdicts == [(True, True, False), (True, False, False), (False, False, True)]
