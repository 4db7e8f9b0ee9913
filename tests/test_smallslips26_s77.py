"""s77 smallslips26: the config checks take the release's batch divisor (`counted_batch_divisor`), so
``batch-divides-trainer-gpus`` is said for plain 0.5 alone, not for 0.5.2 or 0.6 (which take the batch) nor for
0.5.0 or 0.5.1 (whose verdict's broken rule says it); ``solver.plan``, ``make_query`` and ``config_query`` take
``dpo=``, refused with a critic and, without LoRA, with no reference model, as ``--dpo`` is; the LoRA-on-MoE words take
the expert layout without a default; the DPO header note's citations carry their ``trinity/`` prefix."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from inspect import Parameter, signature
from pathlib import Path

import pytest
from test_review77c_s77 import BATCH_OF_6_ON_4, OVER_GPUS

import solver
from solver.api import config_query
from solver.results import lora_moe_caution
from solver.rules import lora_configs_words, lora_moe_unsaved_words
from solver.tables import BatchDivisor, QueryError
from solver.trinity import load_config_mapping, read_trinity_config, trinity_config_problems
from solver.trinity.fragment import DPO_MODE_NOTE

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
NO_CRITIC = "dpo=True trains no PPO critic (Trinity's dpo algorithm uses none): drop critic='{}'"
NO_REFERENCE = ("dpo=True without LoRA builds a reference model (Trinity's dpo algorithm uses one): drop "
                "reference_model=False, or give lora_rank")


@pytest.mark.parametrize(("release", "status", "codes", "broken"), [
    ("0.5", 0, ["batch-divides-trainer-gpus", "critic-trained"], None),  # some 0.5 releases refuse it: a caution
    ("0.5.2", 0, ["critic-trained"], None),  # takes it: nothing said
    ("0.6", 0, ["critic-trained"], None),
    ("0.5.0", 1, ["critic-trained"], "batch-divides"),  # refuses it: the verdict's rule, said once
    ("0.5.1", 1, ["critic-trained"], "batch-divides"),
])
def test_check_says_the_batch_caution_for_plain_0_5_alone(cli: Cli, tmp_path: Path, release: str, status: int,
                                                          codes: list[str], broken: str | None) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(BATCH_OF_6_ON_4, encoding="utf-8")
    got, out, err = cli("--from-config", str(config), "--check", "--gpu", "h100", "--critic", "none",
                        "--trinity-version", release, "--json")
    assert got == status, err
    current = json.loads(out)[0]["current"]
    assert (current["config_problem_codes"], current["broken_rule_code"]) == (codes, broken)
    said = [*current["config_problems"], current["broken_rule"] or ""]
    assert sum(OVER_GPUS in words for words in said) == (release in ("0.5", "0.5.0", "0.5.1"))
    text = " ".join(cli("--from-config", str(config), "--check", "--gpu", "h100", "--critic", "none",
                        "--trinity-version", release)[1].split())
    assert ("for 0.5.0 or 0.5.1, make it a multiple of 4" in text) is (release != "0.5.2" and release != "0.6")


@pytest.mark.parametrize(("version", "divisor", "said"), [
    ("0.5", None, True),  # counted from the minor version: unsure
    ("0.5", "unsure", True),
    ("0.5", "ranks", False),  # 0.5.2
    ("0.5", "gpus", False),  # 0.5.0, 0.5.1: the verdict's rule, not the checks'
    ("0.6", None, False),
    (None, None, False),
])
def test_the_checks_take_the_batch_divisor(version: solver.TrinityVersion | None, divisor: BatchDivisor | None,
                                           said: bool) -> None:
    problems = trinity_config_problems(load_config_mapping(BATCH_OF_6_ON_4, "run.yaml"), CATALOG.model("Qwen3-8B"), 4,
                                       version=version, train_batch_size=6, batch_divisor=divisor)
    over = [problem.words for problem in problems
            if problem.code == solver.ConfigProblemCode.BATCH_DIVIDES_TRAINER_GPUS]
    assert over == ([OVER_GPUS] if said else [])


@pytest.mark.parametrize(("given", "error"), [
    ({"critic": "resident"}, NO_CRITIC.format("resident")),
    ({"critic": "reloaded", "lora_rank": 8}, NO_CRITIC.format("reloaded")),
    ({"reference_model": False}, NO_REFERENCE),
])
def test_the_api_refuses_what_trinitys_dpo_never_runs(given: dict[str, object], error: str) -> None:
    with pytest.raises(QueryError, match=f"^{re.escape(error)}$"):
        solver.plan("Qwen3-8B", gpu="h100", max_model_len=8192, dpo=True, **given)  # type: ignore[arg-type]
    with pytest.raises(QueryError, match=f"^{re.escape(error)}$"):
        solver.make_query(CATALOG, model="Qwen3-8B", gpu="h100", max_model_len=8192, dpo=True,
                          **given)  # type: ignore[arg-type]


@pytest.mark.parametrize("given", [{"critic": "none"}, {"reference_model": False, "lora_rank": 8}, {}])
def test_the_api_takes_what_trinitys_dpo_runs(given: dict[str, object]) -> None:
    query = solver.make_query(CATALOG, model="Qwen3-8B", gpu="h100", max_model_len=8192, dpo=True,
                              **given)  # type: ignore[arg-type]
    assert (query.dpo, query.critic) == (True, None)
    assert solver.make_query(CATALOG, model="Qwen3-8B", gpu="h100", max_model_len=8192).dpo is False


def test_make_query_checks_dpos_type() -> None:
    with pytest.raises(QueryError, match="^dpo must be True or False, got 1$"):
        solver.make_query(CATALOG, model="Qwen3-8B", gpu="h100", max_model_len=8192, dpo=1)  # type: ignore[arg-type]


def test_config_query_takes_the_configs_dpo_and_refuses_another() -> None:
    config = read_trinity_config(BATCH_OF_6_ON_4, "run.yaml", {})  # PPO: a critic trained
    assert (config.dpo, config_query(CATALOG, config, gpu="h100").dpo) == (False, False)
    # dpo= another than the config's is refused since dpoleft_s78 (as --from-config refuses --dpo); its own stands
    with pytest.raises(QueryError, match="^dpo=True, but the config's algorithm.algorithm_type says the run does not "):
        config_query(CATALOG, config, gpu="h100", critic="none", dpo=True)
    assert config_query(CATALOG, config, gpu="h100", dpo=False).dpo is False
    dpo_config = read_trinity_config(BATCH_OF_6_ON_4 + "algorithm:\n  algorithm_type: dpo\n", "run.yaml", {})
    assert (dpo_config.dpo, config_query(CATALOG, dpo_config, gpu="h100").dpo) == (True, True)
    assert config_query(CATALOG, dpo_config, gpu="h100", dpo=True).dpo is True
    with pytest.raises(QueryError, match=f"^{re.escape(NO_CRITIC.format('resident'))}$"):
        config_query(CATALOG, dpo_config, gpu="h100", critic="resident", dpo=True)


@pytest.mark.parametrize("function", [lora_moe_unsaved_words, lora_configs_words, lora_moe_caution])
def test_the_lora_moe_words_take_the_release_and_layout_without_defaults(function: Callable[..., object]) -> None:
    parameters = signature(function).parameters
    assert (parameters["version"].default, parameters["experts"].default) == (Parameter.empty, Parameter.empty)


def test_the_dpo_notes_citations_are_written_alike() -> None:
    note = " ".join(DPO_MODE_NOTE)
    assert re.findall(r"\(?([\w/]+\.py:\d+) in ([\d.]+)", note) == [
        ("trinity/algorithm/algorithm.py:291", "0.6.0"), ("trinity/common/config_validator.py:966", "0.6.0")]
    assert len(re.findall(r"\.py:\d+", note)) == 2
