"""A last read of session 83's change (lastread83): the fragment of a plan asked without DPO, made with ``dpo=True``
for a model trained with remove padding, turns the trainer's dynamic batch sizes off and writes the actor's one pair
with the ref's and the rollout's 1, as the fragment of a DPO plan does (`solver.trinity.plan_keys.turns_dpo_rows`
takes the caller's `dpo` too); before, the keys left dynamic batch sizes on, their own check refused them and the
API raised ``RuntimeError`` (an internal error) in place of a fragment."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_tokbudget_s72 import ARR, CATALOG

import solver.__main__
import solver.cli.status
from solver.api import plan
from solver.results import Plan
from solver.trinity import plan_settings, trinity_fragment

MODEL = CATALOG.model("Qwen3-8B")
DPO_ROWS = ("  # off for DPO: the actor's micro-batch then holds the size below in rows, whole pairs; on, it is\n"
            "  # cut by tokens and its pairs split (the plan counts one pair's tokens)\n  use_dynamic_bsz: false\n")


@cache
def _plan(dpo: bool) -> Plan:
    """The best plan for Qwen3-8B at 8192 tokens within 8 H100s, asked with or without `dpo`."""
    return plan("Qwen3-8B", gpu="H100", budget_gpus=8, max_model_len=8192, catalog=CATALOG, dpo=dpo)[0].best


def _rows_keys(config: dict[str, Any]) -> tuple[Any, ...]:
    """The trainer's ``use_dynamic_bsz`` and the actor's, the ref's and the rollout's micro-batch sizes per GPU in
    `config` (None where unset)."""
    roles = config["trainer"].get("trainer_config", {}).get(ARR.split(".")[-1], {})
    return (config["trainer"].get("use_dynamic_bsz"), roles.get("actor", {}).get("ppo_micro_batch_size_per_gpu"),
            roles.get("ref", {}).get("log_prob_micro_batch_size_per_gpu"),
            roles.get("rollout", {}).get("log_prob_micro_batch_size_per_gpu"))


@pytest.mark.parametrize(("version", "pair"), [(None, 2), ("0.6", 2), ("0.5", 1)])
def test_the_fragment_of_a_plan_without_dpo_made_with_dpo_writes_the_pair_in_rows(version: str | None,
                                                                                  pair: int) -> None:
    assert _plan(False).dpo is False
    text = trinity_fragment(_plan(False), MODEL, dpo=True, version=version)
    assert _rows_keys(yaml.safe_load(text)) == (False, pair, 1, 1)
    assert DPO_ROWS in text
    # as the fragment of the plan asked with DPO writes them
    assert _rows_keys(yaml.safe_load(trinity_fragment(_plan(True), MODEL, version=version))) == (False, pair, 1, 1)


def test_the_settings_of_a_plan_without_dpo_made_with_dpo_are_in_rows() -> None:
    assert _rows_keys(plan_settings(_plan(False), MODEL, dpo=True).config) == (False, 2, 1, 1)


@pytest.mark.parametrize("dpo", [None, False])
def test_the_fragment_of_a_plan_without_dpo_keeps_trinitys_dynamic_batch_sizes(dpo: bool | None) -> None:
    assert _rows_keys(yaml.safe_load(trinity_fragment(_plan(False), MODEL, dpo=dpo))) == (None, None, None, None)


def test_the_internal_error_status_is_the_entry_points_without_importing_it() -> None:
    # solver.cli.status names 70 in every help without importing solver.__main__ (a layer above the package's)
    assert solver.cli.status.INTERNAL_ERROR == solver.__main__.INTERNAL_ERROR == 70
    assert "from solver.__main__ import" not in Path(solver.cli.status.__file__).read_text(encoding="utf-8")
    assert solver.cli.status.STATUSES_AFTER_BAD_INPUT.endswith(", 70 an internal error")


def test_the_settings_check_passes_dpos_mode_refused_only_where_the_keys_leave_the_mode(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # hybriddata90: DPO outside mode train passed the settings' own check whatever the keys wrote; it passes only where
    # they leave the config's mode (which the header says to set, DPO_MODE_NOTE), not a mode: both they would write
    from solver.trinity import settings

    assert "mode" not in plan_settings(_plan(True), MODEL).config
    cluster_keys = settings._cluster_keys

    def mode_both(*args: Any) -> list[Any]:
        return [key.model_copy(update={"value": "both"}) if key.path == ("mode",) else key
                for key in cluster_keys(*args)]

    monkeypatch.setattr(settings, "_cluster_keys", mode_both)
    with pytest.raises(RuntimeError, match=r"breaks Trinity's rules: \[.mode both: Trinity refuses algorithm_type dpo "
                                           "in mode both and explore"):
        plan_settings(_plan(True), MODEL, rollout_gpus=0)
