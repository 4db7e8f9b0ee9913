"""A last read of session 82's whole change (lastread82): one test of a critic of another model, where the check
(its SP's heads, its own remove padding) and ``--write`` (the critic's own SP set to the plan's) each had their own
(`solver.trinity.keys.critic_of_another_model`); the releases a ``--trinity-version`` stands for, taken once
(`solver.trinity.checks._releases_of`, for the keys and algorithms checks); and the words of a key or an algorithm
that only some of those releases lack, made once (`solver.trinity.checks._some_lack_words`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_review82a_s82 import CRITIC, CRITIC_SP

from solver.tables import load_trinity_fields
from solver.trinity.checks import _releases_of, _some_lack_words
from solver.trinity.keys import critic_of_another_model

Cli = Callable[..., tuple[int, str, str]]


@pytest.mark.parametrize(("model", "expected"), [
    ({"model_path": "Qwen/Qwen3-8B"}, False),  # unset: the critic is model_path's
    ({"model_path": "Qwen/Qwen3-8B", "critic_model_path": ""}, False),
    ({"model_path": "Qwen/Qwen3-8B", "critic_model_path": "Qwen/Qwen3-8B"}, False),
    ({"model_path": "Qwen/Qwen3-8B", "critic_model_path": "/models/critic"}, True),
    ({"critic_model_path": "/models/critic"}, True),
])
def test_a_critic_of_another_model_is_one_whose_path_is_set_and_not_the_models(model: dict[str, Any],
                                                                               expected: bool) -> None:
    config = {"model": model}
    assert critic_of_another_model(lambda path: config.get(path[0], {}).get(path[1])) is expected


@pytest.mark.parametrize(("critic_model", "sets_sp"), [("Qwen/Qwen3-8B", True), ("", True), ("/models/critic", False)])
def test_write_sets_the_critics_sp_where_its_model_is_the_plans_as_written(cli: Cli, tmp_path: Path, critic_model: str,
                                                                           sets_sp: bool) -> None:
    # critic_model_path naming model_path itself, or empty, is the plan's model: its SP is the plan's, as unset
    config = tmp_path / "c.yaml"
    config.write_text(CRITIC_SP.replace("max_model_len: 32768}", f"max_model_len: 32768, critic_model_path: "
                                        f"'{critic_model}'}}"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    changed = [change for change in json.loads(out)[0]["config_keys_changed"]
               if change["key"] == f"{CRITIC}.ulysses_sequence_parallel_size"]
    assert status == 0 and changed == ([{"key": f"{CRITIC}.ulysses_sequence_parallel_size", "config_value": 1,
                                         "plan_value": 2}] if sets_sp else [])


def test_the_releases_of_a_version_are_the_tables_of_that_minor_version_in_order() -> None:
    fields = load_trinity_fields()
    assert _releases_of(fields, "0.5") == ["0.5.0", "0.5.1", "0.5.2"]
    assert _releases_of(fields, "0.6") == ["0.6.0"]
    assert _releases_of(fields, None) == ["0.5.0", "0.5.1", "0.5.2", "0.6.0"]


def test_a_key_and_an_algorithm_that_some_releases_lack_take_the_same_words() -> None:
    assert _some_lack_words("trainer.x", "key there", ["0.5.0"], ["0.5.1", "0.5.2"], "remove it") == (
        "trainer.x: Trinity 0.5.0 has no such key there (0.5.1 and 0.5.2 have it), so it refuses the config as it "
        "loads it: with it, remove it")
    assert _some_lack_words("algorithm.algorithm_type grpo_verl", "algorithm", ["0.5.0", "0.5.1"], ["0.5.2"],
                            "name another") == (
        "algorithm.algorithm_type grpo_verl: Trinity 0.5.0 and 0.5.1 have no such algorithm (0.5.2 has it), so they "
        "refuse the config as they load it: with those, name another")
