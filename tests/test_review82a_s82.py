"""A review of s82's first merges (review82a): a ``written_at`` consumer that edits the config's text.

``config_keys_changed``'s ``written_at`` named the anchor's key for a key a ``<<: *anchor`` merges in and ``--write``
removes (a stale ``model.rope_scaling``), though ``--write`` sets it to null where it is merged in
(`solver.trinity.patch._delete`), not at the anchor: a script that edits the file's text, applying the entries
without ``written_at`` (as docs/json.md says), left the key in place. ``written_at`` now says where the copy holds the
key (set, or nulled), else where the config had it (deleted)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML
from test_aliaskeys_s82 import CONFIGS, YARN
from test_criticbudget_s82 import BASE

from solver.trinity import load_config_mapping

Cli = Callable[..., tuple[int, str, str]]
MERGED_ROPE = ("algorithm: {algorithm_type: grpo, repeat_times: 8}\nbuffer: {batch_size: 96}\n"
               "cluster: {node_num: 1, gpu_per_node: 8}\n"
               f"base: &m\n  model_path: Qwen/Qwen3-8B\n  rope_scaling: {YARN}\n"
               "model:\n  <<: *m\n  max_model_len: 16384\n"
               "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n")
"""Qwen3-8B at 16384 tokens, its stale YaRN merged into ``model`` from an anchor (``base``, as test_aliaskeys_s82's
"alias of model"): ``--write`` removes ``model.rope_scaling``, null there, the anchor left as it is (it may be
others')."""
IN_A_LIST = (CONFIGS["aliases of aliases"][0].split("trainer: ")[0]
             + "anchors: [&t {ulysses_sequence_parallel_size: 1}]\ntrainer: *t\n")
"""The trainer's section an alias of a mapping anchored in a list, which no dotted key names: the change is named at
the trainer's keys (no ``written_at``: before, ``anchors.0.ulysses_sequence_parallel_size``) and at the list, whole."""
TEXT_CONFIGS = {**{name: text for name, (text, version) in CONFIGS.items() if version is None},
                "merged rope_scaling": MERGED_ROPE, "anchor in a list": IN_A_LIST}


def _unset_dropped(value: Any) -> Any:
    """`value` (a config as read) without its nulls, which Trinity reads as unset."""
    if isinstance(value, Mapping):
        return {key: _unset_dropped(item) for key, item in value.items() if item is not None}
    return value


def _edited(text: str, changes: list[dict[str, Any]]) -> str:
    """`text` as a script edits it with ruamel's round trip from `changes`: each entry without ``written_at`` at its
    key in the file, set to its plan_value or, removed, to null (a key a ``<<`` merges in cannot be deleted)."""
    yaml = YAML(typ="rt", pure=True)
    data = yaml.load(text)
    for change in changes:
        if "written_at" in change:
            continue
        *parents, last = change["key"].split(".")
        node = data
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = None if change.get("removed") else change["plan_value"]
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def test_a_removed_key_a_merge_brings_in_is_written_where_it_is_read(cli: Cli, tmp_path: Path) -> None:
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(MERGED_ROPE, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json")
    (answer,) = json.loads(out)
    # before: model.rope_scaling had "written_at": "base.rope_scaling", which --write leaves as it is
    assert status == 0 and answer["config_keys_changed"] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384},
        {"key": "model.rope_scaling", "config_value": {
            "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
         "plan_value": None, "removed": True}]
    assert cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))[0] == 0
    copy = written.read_text(encoding="utf-8")
    assert f"base: &m\n  model_path: Qwen/Qwen3-8B\n  rope_scaling: {YARN}\n" in copy
    assert "\n  max_model_len: 16384\n  rope_scaling:\n" in copy


@pytest.mark.parametrize("name", TEXT_CONFIGS)
def test_the_entries_without_written_at_applied_to_the_text_give_the_written_copy(
        cli: Cli, tmp_path: Path, name: str) -> None:
    text = TEXT_CONFIGS[name]
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json")
    assert status == 0
    changes = json.loads(out)[0]["config_keys_changed"]
    assert cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))[0] == 0
    assert _unset_dropped(load_config_mapping(_edited(text, changes), "e")) == _unset_dropped(
        load_config_mapping(written.read_text(encoding="utf-8"), "w"))


CRITIC_SP = BASE + "    critic: {ulysses_sequence_parallel_size: 1, ppo_max_token_len_per_gpu: 20000}\n"
"""PPO on Qwen3-8B at 32768 tokens on 6 trainer H20s at SP 2, the critic at an SP of its own, 1, with a budget of its
own, 20000: at least ceil(32768 / 2) = 16384, so ``--write`` keeps it (criticbudget), as at the plan's SP."""
CRITIC = "trainer.trainer_config.critic"


@pytest.mark.parametrize("version", ["0.5", None])
def test_write_sets_the_critics_own_sp_to_the_plans_where_it_judges_its_budget(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str | None) -> None:
    # Before, the copy kept the critic's SP 1 beside the budget it kept as holding a sequence at the plan's SP 2:
    # 20000 x SP 1 holds none of 32768 tokens, so Trinity 0.5 raises it to 32768 (``_adjust_token_len_if_needed``,
    # trainer/verl/verl_config.py:610 in 0.5.2), more than the plan counts, and --write warned of its own copy (two
    # lines, with --trinity-version 0.5). The critic's SP is now the plan's, as the roles' own SP is.
    monkeypatch.setenv("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(CRITIC_SP, encoding="utf-8")
    options = ("--gpu", "h20", *(("--trinity-version", version) if version else ()))
    status, out, _ = cli("--from-config", str(config), *options, "--json")
    assert status == 0 and [change for change in json.loads(out)[0]["config_keys_changed"]
                            if change["key"].startswith(f"{CRITIC}.u")] == [
        {"key": f"{CRITIC}.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2}]
    status, _, err = cli("--from-config", str(config), *options, "--write", str(written))
    assert status == 0 and "warning" not in err
    copy = written.read_text(encoding="utf-8")
    assert "    critic: {ulysses_sequence_parallel_size: 2, ppo_max_token_len_per_gpu: 20000, model: " in copy
    status, out, _ = cli("--from-config", str(written), *options, "--check", "--json")
    (answer,) = json.loads(out)
    assert status == 0 and answer["config_keys_changed"] == [] and not any(
        "SP 1" in problem for problem in answer["current"]["config_problems"])


def test_a_critic_of_another_model_keeps_its_own_sp(cli: Cli, tmp_path: Path) -> None:
    # rft-solver does not know another critic model's heads, which the plan's SP may not divide: left to the user
    config = tmp_path / "c.yaml"
    config.write_text(CRITIC_SP.replace("max_model_len: 32768}", "max_model_len: 32768, critic_model_path: "
                                        "/models/critic}"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--json")
    assert status == 0 and not any(change["key"] == f"{CRITIC}.ulysses_sequence_parallel_size"
                                   for change in json.loads(out)[0]["config_keys_changed"])


def test_a_mapping_anchored_in_a_list_is_named_at_its_alias_and_the_list_whole(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(IN_A_LIST, encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json")
    assert status == 0 and json.loads(out)[0]["config_keys_changed"] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384},
        {"key": "anchors", "config_value": [{"ulysses_sequence_parallel_size": 1}],
         "plan_value": [{"ulysses_sequence_parallel_size": 2, "max_token_len_per_gpu": 16384}]}]
