"""Session 79, fragcheck3: configs written at main's head, loaded by each release's own Trinity config code (outside
the tests: no Trinity import here). Every one loaded. Before planlora's `Plan.config_lora` and LoRA targets, an answer
to a config with its own LoRA adapter (a q/k/v/o ``target_modules`` regex), read back from ``solve --json``, wrote
``model.lora_configs: [{lora_rank: 64}]`` (all-linear, "as planned") in place of the config's adapter, and counted
all-linear's host memory: read back, it now writes the fragment and settings the answer wrote before it was saved. And
the keys a plan's own release gets with no version named (versionnone) are those rft-solver's field table gives that
release: none that 0.5.x lacks for a plan made for 0.5, 0.5.1 or 0.5.2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

import solver
from solver.api import answer_query, config_query
from solver.tables import load_trinity_fields
from solver.trinity import plan_settings, read_trinity_config, trinity_fragment

Cli = Callable[..., tuple[int, str, str]]

CATALOG = solver.load_catalog()
LORA_CONFIG = ("model:\n  model_path: Qwen/Qwen3-14B\n  max_model_len: 16384\n  lora_configs:\n  - name: dense\n"
               "    lora_rank: 64\n    lora_alpha: 128\n    target_modules: .*\\.(q_proj|k_proj|v_proj|o_proj)\n"
               "cluster:\n  node_num: 1\n  gpu_per_node: 8\nexplorer:\n  rollout_model:\n    engine_num: 2\n"
               "    tensor_parallel_size: 1\n")
"""Qwen3-14B with a rank-64 adapter on the attention's q/k/v/o alone, 6 trainer GPUs beside 2 rollout engines."""
TRAINER_FLAGS = {("trainer", flag): ("0.5.0", "0.5.1", "0.5.2")
                 for flag in ("param_offload", "optimizer_offload", "offload_policy")}
"""Trinity 0.6's offload flags under ``trainer`` itself, as rft-solver's field table says 0.5.x lacks them."""


def _read_back(answer: solver.Answer) -> solver.Answer:
    """`answer` as a script reads it back from ``solve --json``."""
    return solver.Answer.model_validate_json(json.dumps(answer.as_json()))


@pytest.fixture(scope="module")
def lora_answer() -> solver.Answer:
    """The answer to `LORA_CONFIG` on H100s."""
    config = read_trinity_config(LORA_CONFIG, "lora.yaml", {})
    (answer,) = answer_query(config_query(CATALOG, config, gpu="h100", host_ram_gb=512.0), CATALOG)
    return answer


def test_a_config_lora_answer_read_back_writes_no_lora_configs(lora_answer: solver.Answer) -> None:
    assert lora_answer.best is not None and (lora_answer.best.gpus, lora_answer.best.sp) == (6, 2)
    assert lora_answer.as_json()["plans"][0]["config_lora"] is True
    back = _read_back(lora_answer)
    assert back.best is not None and back.best.config_lora is True
    fragment = solver.trinity_config(back)
    assert fragment == solver.trinity_config(lora_answer)  # the host memory line counting q/k/v/o's adapter too
    assert "lora_configs" not in fragment and "all-linear" not in fragment
    assert solver.trinity_settings(back).config["model"] == {"max_model_len": 16384}


def test_solve_json_says_the_plans_lora_is_the_configs(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "lora.yaml"
    path.write_text(LORA_CONFIG)
    status, out, _ = cli("--from-config", str(path), "--gpu", "h100", "--json")
    (answer,) = json.loads(out)
    assert (status, answer["plans"][0]["config_lora"], answer["lora_rank"]) == (0, True, 64)


def test_a_lora_rank_answer_read_back_still_writes_its_adapter() -> None:
    (answer,) = solver.plan("Qwen3-14B", gpu="h100", budget_gpus=4, max_model_len=16384, lora_rank=64)
    assert answer.as_json()["plans"][0]["config_lora"] is False
    lines = [line for line in solver.trinity_config(_read_back(answer)).splitlines() if "lora_configs" in line]
    assert lines == ["  lora_configs: [{lora_rank: 64}]"]


@pytest.mark.parametrize(("release", "lacking"), [("0.5.1", {}), ("0.5.2", {}), ("0.5", {}), (None, TRAINER_FLAGS)])
def test_a_plans_own_release_gets_keys_it_holds(release: str | None, lacking: dict[tuple[str, str], tuple[str, ...]]
                                               ) -> None:
    (planned,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, offload=True,
                             critic="offloaded", trinity_version=release)
    answer = _read_back(planned)
    assert answer.best is not None and answer.best.trinity_version == release and answer.best.offload
    model = CATALOG.model(answer.model)
    fields = load_trinity_fields()
    settings = plan_settings(answer.best, model, 2)
    texts = (solver.trinity_config(answer), trinity_fragment(answer.best, model, 2))
    assert [fields.lacking(yaml.safe_load(text)) for text in texts] == [lacking] * 2
    assert fields.lacking(settings.config) == lacking
    critic = settings.config["trainer"]["trainer_config"]["critic"]
    assert sorted(critic) == (["model", "strategy"] if release else ["fsdp", "model", "strategy"])
    assert len(settings.trinity_06_keys) == (0 if release else 6)
