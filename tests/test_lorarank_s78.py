"""``--lora-rank`` beside a Trinity config (session 78): a config without LoRA gets the LoRA config the plan counted
(``model.lora_configs: [{lora_rank: R}]``, Trinity's default all-linear adapter) from ``--emit trinity``, ``--json``'s
``apply``, ``--write`` and the API (`trinity_config`, `trinity_settings`, `plan_settings` beside a layout,
`patch_trinity_config`), so that it trains what the plan counted, not every parameter; a config with LoRA keeps its own
adapter: ``--write`` (`patch_trinity_config`) refuses a plan at another rank than the adapter's (it would train a rank
the plan did not count) and notes one of full fine-tuning (``--lora-rank 0``, which holds more)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_apilora_s78 import NO_LORA, QV_LORA

import solver
from solver.api import answer_query, config_query
from solver.rules import API_OPTIONS
from solver.tables import QueryError, load_catalog
from solver.trinity import patch_trinity_config, plan_settings, read_trinity_config
from solver.trinity.patch import lora_rank_unkept

Cli = Callable[..., tuple[int, str, str]]
CATALOG = load_catalog()
FLAGS = ("--gpu", "A100-80GB", "--trinity-version", "0.5.2")
WRITTEN_MODEL = {"model_path": "Qwen/Qwen3-8B", "max_model_len": 16384, "lora_configs": [{"lora_rank": 32}]}


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def _answer(text: str, lora_rank: int | None) -> solver.Answer:
    config = read_trinity_config(text, "config.yaml", {}, "0.5")
    (answer,) = answer_query(config_query(CATALOG, config, gpu="A100-80GB", trinity_version="0.5.2",
                                          lora_rank=lora_rank), CATALOG)
    return answer


def test_a_config_without_lora_gets_the_counted_lora_from_the_command(cli: Cli, tmp_path: Path) -> None:
    config = _config(tmp_path, NO_LORA)
    status, out, err = cli("--from-config", str(config), *FLAGS, "--lora-rank", "32", "--json")
    assert status == 0, err
    (answer,) = json.loads(out)
    assert answer["plans"][0]["lora_rank"] == 32 and answer["plans"][0]["memory_gb"] == 52.58
    assert answer["apply"]["config"]["model"] == {"max_model_len": 16384, "lora_configs": [{"lora_rank": 32}]}
    status, fragment, err = cli("--from-config", str(config), *FLAGS, "--lora-rank", "32", "--emit", "trinity")
    assert status == 0, err
    assert yaml.safe_load(fragment)["model"] == answer["apply"]["config"]["model"]
    assert "  lora_configs: [{lora_rank: 32}]\n" in fragment
    assert "  # builds no reference model\n" in fragment  # the comment every LoRA config the plans write carries
    written = tmp_path / "written.yaml"
    status, _, err = cli("--from-config", str(config), *FLAGS, "--lora-rank", "32", "--write", str(written))
    assert status == 0, err
    assert yaml.safe_load(written.read_text())["model"] == WRITTEN_MODEL
    # without --lora-rank the plan counts full fine-tuning, and nothing turns LoRA on
    status, out, err = cli("--from-config", str(config), *FLAGS, "--json")
    assert status == 0, err
    assert json.loads(out)[0]["apply"]["config"]["model"] == {"max_model_len": 16384}


def test_a_config_without_lora_gets_the_counted_lora_from_the_api() -> None:
    answer = _answer(NO_LORA, 32)
    assert answer.best is not None and answer.query is not None and not answer.query.config_lora
    model = CATALOG.model("Qwen3-8B")
    layout = yaml.safe_load(NO_LORA)
    fragment = yaml.safe_load(solver.trinity_config(answer))
    assert solver.trinity_settings(answer).config["model"] == fragment["model"] == plan_settings(
        answer.best, model, layout=layout).config["model"] == {"max_model_len": 16384,
                                                               "lora_configs": [{"lora_rank": 32}]}
    assert yaml.safe_load(patch_trinity_config(NO_LORA, answer.best, model))["model"] == WRITTEN_MODEL
    # beside a layout that sets LoRA, none: it would replace the layout's adapter
    assert plan_settings(answer.best, model, layout=yaml.safe_load(QV_LORA)).config["model"] == {
        "max_model_len": 16384}


def test_write_refuses_another_rank_than_the_configs_adapter(cli: Cli, tmp_path: Path) -> None:
    config, written = _config(tmp_path, QV_LORA), tmp_path / "written.yaml"
    # rank 128 (rank 32 on the config's q and v, which it keeps since adapterkeep_s80, counts fewer parameters than
    # its adapter: refused before the patch, as --emit trinity refuses it)
    status, out, err = cli("--from-config", str(config), *FLAGS, "--lora-rank", "128", "--write", str(written))
    assert (status, out) == (2, "")
    assert err == (f"solve: error: --from-config {config}: the plan counted LoRA rank 128, but model.lora_configs "
                   "trains rank 64, which --write keeps (its lora_alpha scales the adapter by its rank): plan at rank "
                   "64 (--lora-rank 64, or leave it out), or set model.lora_configs's rank to 128 first\n")
    assert not written.exists()
    answer = _answer(QV_LORA, 32)
    assert answer.best is not None
    with pytest.raises(QueryError, match=r"^config: the plan counted LoRA rank 32, but model.lora_configs trains "
                                         r"rank 64, which solver.trinity.patch_trinity_config keeps .*"
                                         r"\(lora_rank=64, or leave it out\)"):
        patch_trinity_config(QV_LORA, answer.best, CATALOG.model("Qwen3-8B"))
    # its own rank: the adapter kept as it is
    for rank in ("64", None):
        status, _, err = cli("--from-config", str(config), *FLAGS, *(("--lora-rank", rank) if rank else ()),
                             "--write", str(written))
        assert status == 0, err
        assert yaml.safe_load(written.read_text())["model"] == yaml.safe_load(QV_LORA)["model"]
        assert "sets LoRA" not in err


def test_write_notes_a_full_fine_tuning_plan_over_a_config_with_lora(cli: Cli, tmp_path: Path) -> None:
    config, written = _config(tmp_path, QV_LORA), tmp_path / "written.yaml"
    status, _, err = cli("--from-config", str(config), *FLAGS, "--lora-rank", "0", "--write", str(written))
    assert status == 0, err
    assert (f"solve: note: {config} sets LoRA (model.lora_configs), which --write keeps: the plan counted full "
            "fine-tuning, which holds more than a LoRA run; remove model.lora_configs to train every parameter\n"
            ) in err
    assert yaml.safe_load(written.read_text())["model"] == yaml.safe_load(QV_LORA)["model"]
    answer = _answer(QV_LORA, 0)
    assert answer.best is not None and answer.best.lora_rank == 0
    patched = solver.trinity.patched_trinity_config(QV_LORA, answer.best, CATALOG.model("Qwen3-8B"))
    assert patched.lora_note == ("config sets LoRA (model.lora_configs), which solver.trinity.patch_trinity_config "
                                 "keeps: the plan counted full fine-tuning, which holds more than a LoRA run; remove "
                                 "model.lora_configs to train every parameter")


def test_an_adapter_without_a_whole_rank_of_its_own_is_not_refused_for_the_plans_rank() -> None:
    # mutants52: a LoRA config whose rank is no whole number (read as 0) was held to the plan's as another rank
    def refusal(rank: object) -> str | None:
        config = {"model": {"lora_configs": [{"name": "mine", "lora_rank": rank}]}}
        return lora_rank_unkept(16, config, "c.yaml", {}, API_OPTIONS)

    assert refusal(8.5) is None and refusal(16) is None
    assert (refusal(32) or "").startswith(
        "c.yaml: the plan counted LoRA rank 16, but model.lora_configs trains rank 32,")
