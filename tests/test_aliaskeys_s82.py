"""``config_keys_changed`` under YAML aliases (session 82, aliaskeys).

``solve --from-config C --json``'s ``config_keys_changed`` named a key that an alias (``*a``) or a merge
(``<<: *a``) repeats at the anchor's path alone, so a CI script applying the list to the config as read kept, say,
``explorer.dummy.param_offload``, which ``--write`` removes. The list is now the difference of the config and its
``--write`` copy as Trinity reads them (`solver.trinity.patch._differences`): every path whose value changes or goes,
an alias's with ``written_at``, the place in the file where the change is made (the anchor's). And a config whose
alias holds itself (``extra: &x {b: *x}``), which OmegaConf cannot load (a RecursionError) and whose ``--write``
copy had ``{b: null}``, is refused in one line naming the key."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
from test_json import jsonschema_errors
from test_review81a_s81 import _applied

import solver
from solver.trinity import config_key_changes, load_config_mapping

Cli = Callable[..., tuple[int, str, str]]
HEAD = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 96}
cluster: {node_num: 1, gpu_per_node: 8}
"""
MODEL = "model: {model_path: Qwen/Qwen3-8B, max_model_len: 16384}\n"
ROLLOUT = "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}}\n"
YARN = "{rope_type: yarn, factor: 4.0, original_max_position_embeddings: 32768}"
ROLES = "trainer:\n  trainer_config:\n    actor_rollout_ref:\n"
FSDP = (HEAD + MODEL + ROLLOUT + ROLES + "      actor:\n        fsdp_config: &offload {param_offload: true, "
        "optimizer_offload: true}\n      ref:\n        fsdp_config: *offload\n")
"""The actor's and the ref's ``fsdp_config`` one anchor: the patch turns the actor's offload flags off, the ref's
too."""
ACTOR = "trainer.trainer_config.actor_rollout_ref.actor.fsdp_config"
REF = "trainer.trainer_config.actor_rollout_ref.ref.fsdp_config"
CONFIGS = {
    "plain": (HEAD + f"model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n  rope_scaling: {YARN}\n"
              + ROLLOUT + "trainer: {ulysses_sequence_parallel_size: 1, param_offload: false}\n", "0.5"),
    "alias of trainer": (HEAD + MODEL + "trainer: &t\n  param_offload: false\n  ulysses_sequence_parallel_size: 2\n"
                         "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: 1}, dummy: *t}\n", "0.5"),
    "roles' fsdp_config": (FSDP, None),
    "merge of trainer": (HEAD + MODEL + "trainer: &t\n  ulysses_sequence_parallel_size: 1\nexplorer:\n"
                         "  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n  dummy:\n    <<: *t\n"
                         "    own: 1\n", None),
    "merge into trainer": (HEAD + MODEL + ROLLOUT + "common: &c {ulysses_sequence_parallel_size: 1, balance_batch: "
                           "true}\ntrainer:\n  <<: *c\n  param_offload: false\n", "0.5"),
    "aliases of aliases": (HEAD + MODEL + ROLLOUT + "trainer: &t {ulysses_sequence_parallel_size: 1}\n"
                           "more: &m {t: *t}\nevenmore: {m: *m, t2: *t}\n", None),
    "scalar anchor": (HEAD + MODEL + "explorer: {rollout_model: {engine_num: 4, tensor_parallel_size: *one}}\n"
                      .replace("explorer", "trainer: {ulysses_sequence_parallel_size: &one 1}\nexplorer"), None),
    "alias of model": (HEAD + f"base: &m\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n  rope_scaling: "
                       f"{YARN}\nmodel: *m\n" + ROLLOUT, None),
}
"""Configs of Qwen3-8B at 16384 tokens on 8 H100s with anchors, merges and plain keys, each with the Trinity release
it is patched for (0.5: 0.6's keys under ``trainer`` removed)."""
WRITTEN_ELSEWHERE = {"alias of trainer", "roles' fsdp_config", "merge of trainer", "aliases of aliases",
                     "alias of model"}
"""Those of `CONFIGS` where --write changes a key through an alias or a merge: its entry has ``written_at``. (The
scalar anchor's key is written out at its own place; a key a ``<<`` merges into trainer is set as trainer's own.)"""


def _flat(mapping: Mapping[Any, Any], path: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    """Every path to a value that is not a mapping in `mapping` (a config as read), aliases expanded, nulls left out
    (Trinity reads them as unset)."""
    found: dict[tuple[str, ...], Any] = {}
    for key, value in mapping.items():
        if isinstance(value, Mapping):
            found.update(_flat(value, (*path, str(key))))
        elif value is not None:
            found[(*path, str(key))] = value
    return found


def _expected_keys(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The keys set and the keys removed between the configs `before` and `after` as read: each path to a value
    `after` adds or changes (of its type too), and for each value it drops, the path of the shortest key above it
    that `after` lacks (a mapping removed whole is one key)."""
    old, new = _flat(before), _flat(after)
    changed = {path for path, value in new.items() if path not in old or (type(old[path]), old[path]) != (
        type(value), value)}
    removed = {next(path[:depth] for depth in range(1, len(path) + 1) if _value_at(after, path[:depth]) is None)
               for path in old if path not in new}
    return {".".join(path) for path in changed}, {".".join(path) for path in removed}


def _value_at(mapping: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    node: Any = mapping
    for part in path:
        node = node.get(part) if isinstance(node, Mapping) else None
    return node


@pytest.mark.parametrize("name", CONFIGS)
def test_the_keys_changed_are_the_difference_of_the_config_and_its_written_copy_as_read(
        cli: Cli, tmp_path: Path, name: str) -> None:
    text, version = CONFIGS[name]
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(text, encoding="utf-8")
    options = ("--trinity-version", version) if version else ()
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", *options, "--json")
    (answer,) = json.loads(out)
    assert status == 0 and jsonschema_errors("solve", [answer]) == []
    changes = answer["config_keys_changed"]
    assert cli("--from-config", str(config), "--gpu", "h100", *options, "--write", str(written))[0] == 0
    before, after = load_config_mapping(text, "c"), load_config_mapping(written.read_text(encoding="utf-8"), "w")
    keys = [change["key"] for change in changes]
    assert len(keys) == len(set(keys)) and changes  # each once; every config here changes
    assert ({change["key"] for change in changes if not change.get("removed")},
            {change["key"] for change in changes if change.get("removed")}) == _expected_keys(before, after)
    # a script that applies the list to the config as read (aliases expanded, as JSON) gets the written copy's
    assert _applied(json.loads(json.dumps(before)), changes) == json.loads(json.dumps(after))
    # written_at only where the change is made at another key, which the change is made at too (its anchor's)
    for change in changes:
        if (place := change.get("written_at")) is not None:
            at = tuple(place.split("."))
            assert place != change["key"] and _value_at(before, at) == change["config_value"]
            assert _value_at(after, at) == change["plan_value"]
    assert any("written_at" in change for change in changes) == (name in WRITTEN_ELSEWHERE)
    # every key set comes before the keys removed
    assert [bool(change.get("removed")) for change in changes] == sorted(bool(change.get("removed"))
                                                                         for change in changes)


def test_a_key_an_alias_repeats_is_named_at_each_path_with_where_it_is_written() -> None:
    # the ref's fsdp_config is the actor's (*offload): turning the actor's flags off turns the ref's off too, each
    # written at the actor's, right after it; the keys set with no alias first, in the order --write sets them
    catalog = solver.load_catalog()
    (answer,) = solver.api.answer_query(solver.api.config_query(
        catalog, solver.trinity.read_trinity_config(FSDP, "c", {}), gpu="h100"), catalog)
    assert answer.best is not None and answer.best.setting.label == "Env + SP=2"
    changes = config_key_changes(FSDP, answer.best, catalog.model("Qwen3-8B"), environ={})
    assert [change.model_dump(mode="json") for change in changes] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384},
        {"key": f"{ACTOR}.param_offload", "config_value": True, "plan_value": False},
        {"key": f"{REF}.param_offload", "config_value": True, "plan_value": False,
         "written_at": f"{ACTOR}.param_offload"},
        {"key": f"{ACTOR}.optimizer_offload", "config_value": True, "plan_value": False},
        {"key": f"{REF}.optimizer_offload", "config_value": True, "plan_value": False,
         "written_at": f"{ACTOR}.optimizer_offload"}]
    assert changes[2].written_at is None  # left out of its JSON (above), as removed is


def test_aliases_of_aliases_cost_no_more_than_the_text() -> None:
    # 2**40 paths through l40, none of which the patch changes: compared once each, nothing named
    text = CONFIGS["aliases of aliases"][0] + "l0: &l0 {seed: 0}\n" + "".join(
        f"l{i}: &l{i} [*l{i - 1}, *l{i - 1}]\n" for i in range(1, 41))
    catalog = solver.load_catalog()
    (answer,) = solver.api.answer_query(solver.api.config_query(
        catalog, solver.trinity.read_trinity_config(text, "c", {}), gpu="h100"), catalog)
    assert answer.best is not None
    assert [change.key for change in config_key_changes(text, answer.best, catalog.model("Qwen3-8B"), environ={})
            ] == [f"{path}.{key}" for key in ("ulysses_sequence_parallel_size", "max_token_len_per_gpu")
                  for path in ("trainer", "more.t", "evenmore.m.t", "evenmore.t2")]


HOLDS_ITSELF = " a value that holds itself, which OmegaConf (and so Trinity) cannot load, as it recurses without end;"


@pytest.mark.parametrize(("extra", "words"), [
    ("extra: &x {b: *x}\n", "extra.b repeats extra, the mapping"),
    ("extra: &x [1, [2, *x]]\n", "extra.1.1 repeats extra, the list"),
    ("extra: &x {b: 1, c: {<<: *x}}\n", "extra.c.c repeats extra.c, the mapping")], ids=["alias", "list", "merge"])
def test_a_config_that_holds_itself_is_refused_naming_the_key(cli: Cli, tmp_path: Path, extra: str, words: str) -> None:
    # OmegaConf.create of each raises RecursionError (omegaconf 2.3.0): Trinity cannot load it, so neither --json
    # nor --write answers (--write's copy had {b: null} before)
    config, written = tmp_path / "self.yaml", tmp_path / "w.yaml"
    config.write_text(HEAD + MODEL + ROLLOUT + extra, encoding="utf-8")
    key = words.split(" ", 1)[0]
    line = (f"solve: error: --from-config {config}: {words} that holds it (an alias, or a <<: merge, inside its own "
            f"anchor's value):{HOLDS_ITSELF} give {key} a value of its own\n")
    assert cli("--from-config", str(config), "--gpu", "h100", "--json") == (2, "", line)
    assert cli("--from-config", str(config), "--gpu", "h100", "--write", str(written)) == (2, "", line)
    assert not written.exists()
    with pytest.raises(solver.trinity.ConfigError, match=r"^c: " + key.replace(".", r"\.") + " repeats "):
        load_config_mapping(HEAD + extra, "c")


def test_the_whole_config_holding_itself_is_named_so() -> None:
    with pytest.raises(solver.trinity.ConfigError) as refused:
        load_config_mapping("&r\na: *r\n", "c")
    assert str(refused.value) == (
        "c: a repeats the whole config, the mapping that holds it (an alias, or a <<: merge, inside its own anchor's "
        f"value):{HOLDS_ITSELF} give a a value of its own")
