"""A plan keeps its --from-config config's own LoRA adapter (session 80, adapterkeep): `Plan.config_adapter` (its key,
rank and targets as the plans count them) is in the plan's JSON, so that ``trinity_config`` and ``trinity_settings``
of an answer read back from JSON refuse an adapter the plan under-counts exactly as of the answer itself;
``config_query`` (and ``--from-config``) with another ``lora_rank`` keeps the config's own ``target_modules``, which
the config keeps; and ``trinity_config``'s check command for a ``config_query`` answer leaves the config's own rank
to it and gives ``--lora-targets`` where the plans counted others, so that it reproduces the answer's plan."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_review79b_s79 import CONFIG, QV

import solver
from solver.api import answer_query, config_query
from solver.tables import QueryError, load_catalog
from solver.tables.peft_names import LoraTargets
from solver.trinity import read_trinity_config

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
A100 = ("--gpu", "A100-80GB")
QKVO = ".*\\.(q_proj|k_proj|v_proj|o_proj)"
ADAPTER = {"key": "model.lora_configs", "rank": 64, "target_modules": QV, "exclude_modules": None}
"""The config's own adapter as its plans keep it (CONFIG on q and v, rank 64)."""
LOWER_RANK = ("config: the plan counted its LoRA adapter at rank 16 (7,667,712 parameters), but the config's own "
              "(model.lora_configs), at rank 64, which {} keeps, adapts 30,670,848: plan at its rank (leave {} out), "
              "or set its lora_rank to 16 first")
FEWER_TARGETS = ("config: the plan counted its LoRA adapter on '.*\\.q_proj' (18,874,368 parameters), but the config's "
                 "own target_modules (model.lora_configs), which {} keeps, adapt 30,670,848: plan on them (leave "
                 "lora_targets out), or set them to '.*\\.q_proj' first")


def _answer(**keywords: Any) -> solver.Answer:
    """The API's answer on an A100-80GB for CONFIG (q and v at rank 64) with `keywords` given to `config_query`."""
    config = read_trinity_config(CONFIG % QV, "grpo.yaml", {})
    (answer,) = answer_query(config_query(CATALOG, config, gpu="A100-80GB", **keywords), CATALOG)
    return answer


def _read_back(answer: solver.Answer) -> solver.Answer:
    return solver.Answer.model_validate_json(json.dumps(answer.as_json()))


def _refusal(made: Callable[[solver.Answer], object], answer: solver.Answer) -> str | None:
    try:
        made(answer)
    except QueryError as error:
        return str(error)
    return None


# (1) Before: an answer read back from its JSON held no query, so trinity_config and trinity_settings wrote the
# fragment that keeps the config's rank-64 adapter for a plan that counted rank 16 (or q_proj alone).

def test_the_plan_keeps_the_configs_adapter_in_its_json() -> None:
    answer = _answer()
    assert answer.best is not None and answer.best.config_adapter is not None
    assert answer.as_json()["plans"][0]["config_adapter"] == ADAPTER
    assert [plan.config_adapter for plan in _read_back(answer).plans] == [plan.config_adapter for plan in answer.plans]
    plain = solver.plan("Qwen3-8B", gpu="A100-80GB", max_model_len=16384, budget_gpus=8, lora_rank=64)[0]
    assert plain.as_json()["plans"][0]["config_adapter"] is None


def test_a_read_back_answer_is_refused_as_the_answer_is() -> None:
    for keywords, refused in (({"lora_rank": 16}, LOWER_RANK), ({"lora_targets": "q_proj"}, FEWER_TARGETS)):
        answer = _answer(**keywords)
        for made in (solver.trinity_config, solver.trinity_settings):
            words = refused.format(made.__name__, "lora_rank")
            assert (_refusal(made, answer), _refusal(made, _read_back(answer))) == (words, words)
    # an over-count (rank 128) is written from either, the config's adapter kept: no model.lora_configs
    higher = _answer(lora_rank=128)
    assert solver.trinity_config(_read_back(higher)) == solver.trinity_config(higher)
    assert "lora_configs" not in solver.trinity_settings(_read_back(higher)).config["model"]


def test_solve_json_read_back_is_refused(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "grpo.yaml"
    config.write_text(CONFIG % QV, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), *A100, "--lora-rank", "16", "--json")
    (saved,) = json.loads(out)
    assert (status, saved["plans"][0]["config_adapter"]) == (0, ADAPTER)
    back = solver.Answer.model_validate(saved)
    assert _refusal(solver.trinity_config, back) == LOWER_RANK.format("trinity_config", "lora_rank")
    # JSON made before the field holds no adapter: not checked, as before
    del saved["plans"][0]["config_adapter"]
    assert _refusal(solver.trinity_config, solver.Answer.model_validate(saved)) is None


# (2) Before: config_query(..., lora_rank=R) other than the config's 64 counted a new adapter on all-linear, though the
# config keeps its own q and v adapter: --lora-rank 16 counted 43,646,976 parameters and was written.

def test_another_rank_keeps_the_configs_targets(cli: Cli, tmp_path: Path) -> None:
    config = read_trinity_config(CONFIG % QV, "grpo.yaml", {})
    for rank in (None, 16, 64, 128):
        assert config_query(CATALOG, config, gpu="A100-80GB", lora_rank=rank).lora_targets == LoraTargets(QV)
    assert config_query(CATALOG, config, gpu="A100-80GB", lora_rank=0).lora_targets is None  # full fine-tuning
    higher = _answer(lora_rank=128).best
    assert higher is not None and (higher.lora_rank, higher.lora_target_modules) == (128, QV)
    path = tmp_path / "grpo.yaml"
    path.write_text(CONFIG % QV, encoding="utf-8")
    status, out, err = cli("--from-config", str(path), *A100, "--lora-rank", "16", "--emit", "trinity")
    words = LOWER_RANK.format("--emit trinity", "--lora-rank").removeprefix("config")
    assert (status, out, err) == (2, "", f"solve: error: --from-config {path}{words}\n")


# (3) Before: trinity_config's check command gave the config's own --lora-rank 64 and no --lora-targets, so that for a
# plan of lora_targets= it checked the config's q and v adapter, not the adapter the plan counted.

def _merged(config: Mapping[str, Any], keys: Mapping[str, Any]) -> dict[str, Any]:
    """`config` with the fragment's `keys` merged in, as a user merges them (nested mappings key by key)."""
    merged = dict(config)
    for key, value in keys.items():
        own = merged.get(key)
        merged[key] = _merged(own, value) if isinstance(own, dict) and isinstance(value, dict) else value
    return merged


def _checked_plan(cli: Cli, monkeypatch: pytest.MonkeyPatch, command: str, config: Path) -> dict[str, Any]:
    """The best plan of the check command `command` (as the fragment's header prints it) run on `config`."""
    words = shlex.split(command.removeprefix("#").strip())
    solve = words.index("solve")
    for assignment in words[:solve]:
        monkeypatch.setenv(*assignment.split("=", 1))
    status, out, err = cli(*[str(config) if word == "CONFIG" else word for word in words[solve + 1:]], "--json")
    assert status == 0, err
    plan: dict[str, Any] = json.loads(out)[0]["plans"][0]
    return plan


COUNTED = ("gpus", "sp", "env", "offload", "max_model_len", "memory_gb", "lora_rank", "lora_target_modules",
           "lora_exclude_modules", "config_lora", "config_adapter")


def test_the_check_command_reproduces_the_answer(cli: Cli, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    commands = []
    for keywords in ({}, {"lora_targets": "q_proj,k_proj,v_proj,o_proj"}, {"lora_targets": "all-linear"},
                     {"lora_rank": 128}):
        answer = _answer(**keywords)
        fragment = solver.trinity_config(answer)
        (command,) = [line for line in fragment.splitlines() if "--check" in line]
        commands.append(command.split(" --check ")[1])
        config = tmp_path / "merged.yaml"
        config.write_text(yaml.safe_dump(_merged(yaml.safe_load(CONFIG % QV), yaml.safe_load(fragment))))
        plan = _checked_plan(cli, monkeypatch, command, config)
        wanted = answer.as_json()["plans"][0]
        assert {key: plan[key] for key in COUNTED} == {key: wanted[key] for key in COUNTED}, keywords
    assert commands == ["--gpu A100-80GB --critic none", f"--gpu A100-80GB --lora-targets '{QKVO}' --critic none",
                        "--gpu A100-80GB --lora-targets all-linear --critic none",
                        "--gpu A100-80GB --lora-rank 128 --critic none"]
    # before: the config's own --lora-rank and no --lora-targets checked the config's q and v adapter instead
    unkept = _checked_plan(cli, monkeypatch, "solve --from-config CONFIG --check --gpu A100-80GB --lora-rank 64 "
                                             "--critic none", tmp_path / "merged.yaml")
    assert (unkept["lora_rank"], unkept["lora_target_modules"]) == (64, QV)
