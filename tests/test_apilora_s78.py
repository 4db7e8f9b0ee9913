"""The API keeps a Trinity config's own LoRA adapter (session 78): an answer to `config_query` of a config that sets
LoRA (`Query.config_lora`) gets a fragment and settings (`trinity_config`, `trinity_settings`) without
``model.lora_configs``, which a merge would put in place of the config's adapter (its ``target_modules``, ``name``,
``lora_alpha``), as ``solve --from-config``'s ``--emit trinity`` and ``--json``'s ``apply`` write none; a plan of
``lora_rank=`` alone, or of a config without LoRA, still writes the LoRA config that turns it on."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml

import solver
from solver.api import answer_query, config_query
from solver.tables import load_catalog
from solver.trinity import read_trinity_config

CATALOG = load_catalog()
QV_LORA = """model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 16384
  lora_configs:
    - name: mine
      lora_rank: 64
      lora_alpha: 128
      target_modules: '.*\\.(q_proj|v_proj)'
cluster:
  node_num: 1
  gpu_per_node: 8
buffer:
  batch_size: 96
algorithm:
  algorithm_type: grpo
  repeat_times: 8
explorer:
  rollout_model:
    engine_num: 2
    tensor_parallel_size: 1
"""
NO_LORA = QV_LORA.replace("""  lora_configs:
    - name: mine
      lora_rank: 64
      lora_alpha: 128
      target_modules: '.*\\.(q_proj|v_proj)'
""", "")


def _api_answer(text: str, **keywords: object) -> solver.Answer:
    """The API's answer on an A100-80GB for the config `text`, read for Trinity 0.5.2."""
    config = read_trinity_config(text, "config.yaml", {}, "0.5")
    query = config_query(CATALOG, config, gpu="A100-80GB", trinity_version="0.5.2", **keywords)  # type: ignore[arg-type]
    (answer,) = answer_query(query, CATALOG)
    return answer


def _cli_keys(cli: Callable[..., tuple[int, str, str]], tmp_path: Path, text: str) -> tuple[dict[str, object], str]:
    """``solve --from-config``'s ``--json`` ``apply`` keys and ``--emit trinity`` fragment for the config `text`."""
    path = tmp_path / "config.yaml"
    path.write_text(text)
    flags = ("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.5.2")
    status, out, err = cli(*flags, "--json")
    assert status == 0, err
    apply = json.loads(out)[0]["apply"]["config"]
    status, fragment, err = cli(*flags, "--emit", "trinity")
    assert status == 0, err
    return apply, fragment


def test_config_lora_kept_as_the_command_keeps_it(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    answer = _api_answer(QV_LORA)
    assert answer.query is not None and answer.query.config_lora and answer.best is not None
    assert answer.best.lora_rank == 64
    settings = solver.trinity_settings(answer, version="0.5.2").config
    fragment = yaml.safe_load(solver.trinity_config(answer, version="0.5.2"))
    apply, emitted = _cli_keys(cli, tmp_path, QV_LORA)
    assert settings["model"] == fragment["model"] == apply["model"] == yaml.safe_load(emitted)["model"] == {
        "max_model_len": 16384}
    assert "lora_configs" not in solver.trinity_config(answer, version="0.5.2")


def test_lora_rank_over_a_config_lora_kept(cli: Callable[..., tuple[int, str, str]], tmp_path: Path) -> None:
    answer = _api_answer(QV_LORA, lora_rank=32)
    assert answer.best is not None and answer.best.lora_rank == 32
    path = tmp_path / "config.yaml"
    path.write_text(QV_LORA)
    status, out, err = cli("--from-config", str(path), "--gpu", "A100-80GB", "--trinity-version", "0.5.2",
                           "--lora-rank", "32", "--json")
    assert status == 0, err
    assert solver.trinity_settings(answer).config["model"] == json.loads(out)[0]["apply"]["config"]["model"] == {
        "max_model_len": 16384}


def test_new_lora_written_without_a_config_lora() -> None:
    answer = _api_answer(NO_LORA, lora_rank=32)
    assert answer.query is not None and not answer.query.config_lora
    assert solver.trinity_settings(answer).config["model"] == {"max_model_len": 16384, "lora_configs": [
        {"lora_rank": 32}]}
    (planned,) = solver.plan("Qwen3-8B", gpu="A100-80GB", max_model_len=16384, budget_gpus=6, lora_rank=64,
                             rollout_gpus=2)
    assert solver.trinity_settings(planned).config["model"]["lora_configs"] == [{"lora_rank": 64}]
