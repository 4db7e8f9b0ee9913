"""Do the docs say what the code does (session 74's changes)? The claims whose code slipped, pinned: `--reference`
with a config's LoRA is refused whatever rank the plans count (README, docs/api.md, docs/memory.md), and the figures
docs/json.md's `rollout-engine-memory-refused` example gives are the check's."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.api import config_query
from solver.query import QueryError
from solver.tables import load_catalog
from solver.trinity import read_trinity_config

CATALOG = load_catalog()
DOCS = Path(__file__).resolve().parent.parent / "docs"
NO_REFERENCE = ("no Trinity release builds a reference model for a LoRA run (the actor with its adapter disabled "
                "gives the ref's log-probs)")
Cli = Callable[..., tuple[int, str, str]]


def _config(tmp_path: Path, model_keys: str, trainer: str = "") -> Path:
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      f"model: {{model_path: Qwen/Qwen3-8B, max_model_len: 8192{model_keys}}}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n"
                      f"{trainer}", encoding="utf-8")
    return config


# An adapter the config loads: every release turns LoRA on from model.lora_configs and builds no reference model,
# though the plans count full fine-tuning's states (the adapter's rank is its own file's). Before session 74's
# docstruth8, --reference was refused only for a LoRA counted at a rank, and counted a reference model here.
LOADED = ", lora_configs: [{lora_rank: 64, path: /adapters/mine}]"


def test_reference_with_a_config_that_loads_an_adapter_is_refused(tmp_path: Path, cli: Cli):
    config = _config(tmp_path, LOADED)
    code, out, err = cli("--from-config", str(config), "--gpu", "h100", "--reference")
    assert (code, out, err) == (2, "", (
        f"solve: error: --reference with the config's LoRA (model.lora_configs): {NO_REFERENCE}; give --no-reference, "
        "or leave it out\n"))
    # Without --reference it counts none, full fine-tuning's states (rank 0).
    answer = json.loads(cli("--from-config", str(config), "--gpu", "h100", "--json")[1])[0]
    assert (answer["reference_model"], answer["lora_rank"]) == (False, 0)
    # A rank counted keeps its words.
    config = _config(tmp_path, ", lora_configs: [{lora_rank: 16}]")
    assert cli("--from-config", str(config), "--gpu", "h100", "--reference")[2] == (
        f"solve: error: --reference with the config's LoRA (rank 16): {NO_REFERENCE}; give --no-reference, or leave "
        "it out\n")


def test_the_api_refuses_it_in_its_keywords(tmp_path: Path):
    config = read_trinity_config(_config(tmp_path, LOADED).read_text(encoding="utf-8"), "trinity.yaml", {})
    assert (config.lora_key, config.lora_rank, config.reference_model) == ("model.lora_configs", 0, False)
    with pytest.raises(QueryError) as refused:
        config_query(CATALOG, config, gpu="h100", reference_model=True)
    assert str(refused.value) == (f"reference_model=True with the config's LoRA (model.lora_configs): {NO_REFERENCE}; "
                                  "give reference_model=False, or leave it out")
    # lora_rank= given overrides the config's LoRA; its own rank is then what is checked.
    assert config_query(CATALOG, config, gpu="h100", lora_rank=0, reference_model=True).reference_model is True


@pytest.mark.parametrize(("version", "refused"), [(None, False), ("0.6", False), ("0.5", True)])
def test_a_lora_key_trinity_06_on_verl_08_ignores_is_refused_on_05_alone(tmp_path: Path, cli: Cli,
                                                                         version: str | None, refused: bool):
    # actor_rollout_ref.model.lora_adapter_path: verl before 0.8 loads it; Trinity 0.6 on verl 0.8 or later ignores
    # it (FROZEN_KEYS) and builds a reference model, so --reference is refused only for Trinity 0.5.
    trainer = ("trainer: {trainer_config: {actor_rollout_ref: {model: {lora_adapter_path: /adapters/mine}}}}\n")
    config = _config(tmp_path, "", trainer)
    given = ("--trinity-version", version) if version else ()
    code, out, err = cli("--from-config", str(config), "--gpu", "h100", "--reference", *given, "--json")
    if refused:
        assert (code, err) == (2, (
            "solve: error: --reference with the config's LoRA (trainer.trainer_config.actor_rollout_ref.model."
            f"lora_adapter_path): {NO_REFERENCE}; give --no-reference, or leave it out\n"))
    else:
        assert (code, json.loads(out)[0]["reference_model"]) == (0, True)


def test_the_docs_say_a_config_s_lora_refuses_reference():
    memory = " ".join((DOCS / "memory.md").read_text(encoding="utf-8").split())
    assert ("(but for LoRA: `--lora-rank`'s, or a config's that every release it may run on turns on, "
            "`model.lora_configs` with a new adapter or one it loads, which none builds one for: refused)") in memory
    api = " ".join((DOCS / "api.md").read_text(encoding="utf-8").split())
    assert ("`reference_model=True` with LoRA, the config's (`TrinityConfig.lora_key`, the key that turns it on with "
            "every release it may run on: a new adapter, or one it loads, whatever rank the plans count) or "
            "`lora_rank=`'s, is a `QueryError`") in api


def test_json_md_s_rollout_engine_example_gives_the_check_s_figures(tmp_path: Path, cli: Cli):
    row = next(line for line in (DOCS / "json.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `rollout-engine-memory-refused` |"))
    weights, taken = re.search(r"\((\d+\.\d) GiB of weights per GPU, (\d+\.\d) GiB taken by vLLM\)", row).groups()
    assert "Qwen3-14B with `tensor_parallel_size: 1` on RTX-4090-24GB" in row
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\n"
                      "model: {model_path: Qwen/Qwen3-14B, max_model_len: 4096}\n"
                      "cluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 2, tensor_parallel_size: 1}}\n", encoding="utf-8")
    code, out, _ = cli("--from-config", str(config), "--gpu", "RTX-4090-24GB", "--check", "--json")
    current = json.loads(out)[0]["current"]
    words = dict(zip(current["config_problem_codes"], current["config_problems"], strict=True))
    line = " ".join(words["rollout-engine-memory-refused"].split())
    assert code == 1 and current["refused"] is True
    assert f"Qwen3-14B's 16-bit weights ({weights} GiB)" in line
    assert f"what vLLM takes of one RTX-4090-24GB ({taken} GiB:" in line
