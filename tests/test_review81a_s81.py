"""A review of session 81's first merges (review81a): what ``--json``'s ``config_keys_changed`` left out, and the
solves a capped refusal takes.

``config_keys_changed`` (jsonkeys) named every key ``--write`` sets, but not those it removes: a stale
``model.rope_scaling`` (and the rollout model's, where it repeats it) and, for Trinity 0.5, 0.6's keys under
``trainer``, which 0.5 refuses. A CI script that applied the list kept a YaRN that contradicts the plan's length, or a
config Trinity 0.5 does not load. They now follow the keys set, each ``"removed": true`` with ``plan_value`` null,
found by reading the patched copy (`solver.trinity.patch._differences` since s82), so the list is what ``--write``
does. And
``smallest_cap_plan``'s one solve more makes a capped refusal's most 15 solves, not the 14 docs/api.md said."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_json import jsonschema_errors

import solver
import solver.solve as solve_module
from solver.results import Answer
from solver.trinity import config_key_changes, load_config_mapping

Cli = Callable[..., tuple[int, str, str]]
ROOT = Path(__file__).resolve().parent.parent
STALE = """\
algorithm: {algorithm_type: grpo, repeat_times: 8}
buffer: {batch_size: 96}
model:
  model_path: Qwen/Qwen3-8B
  max_model_len: 16384
  rope_scaling: &rope {rope_type: yarn, factor: 4.0, original_max_position_embeddings: 32768}
cluster: {node_num: 1, gpu_per_node: 8}
explorer:
  rollout_model: {engine_num: 4, tensor_parallel_size: 1, rope_scaling: *rope}
trainer:
  ulysses_sequence_parallel_size: 1
  max_token_len_per_gpu: 32768
  param_offload: false
"""
"""Qwen3-8B at 16384 tokens, within its native 40960, with a YaRN factor 4 the rollout model repeats (stale: --write
removes both), and Trinity 0.6's ``trainer.param_offload`` (--write removes it for 0.5)."""
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}


def _changes(cli: Cli, config: Path, *options: str) -> list[dict[str, Any]]:
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", *options, "--json")
    (answer,) = json.loads(out)
    assert status == 0 and jsonschema_errors("solve", [answer]) == []
    changes = answer["config_keys_changed"]
    assert Answer.model_validate(answer).as_json()["config_keys_changed"] == changes  # read back, the same JSON
    return list(changes)


def _applied(mapping: dict[str, Any], changes: list[dict[str, Any]]) -> dict[str, Any]:
    """`mapping` with `changes` applied as a CI script would: each key set to its plan_value, or deleted."""
    for change in changes:
        *parents, last = change["key"].split(".")
        node = mapping
        for part in parents:
            node = node.setdefault(part, {})
        if change.get("removed"):
            del node[last]
        else:
            node[last] = change["plan_value"]
    return mapping


@pytest.mark.parametrize(("options", "trainer"), [
    ((), [{"key": "trainer.optimizer_offload", "config_value": None, "plan_value": False},
          {"key": "trainer.offload_policy", "config_value": None, "plan_value": False}]),
    (("--trinity-version", "0.5"), [])], ids=["0.6", "0.5"])
def test_json_names_the_keys_write_removes_and_applying_it_gives_writes_copy(
        cli: Cli, tmp_path: Path, options: tuple[str, ...], trainer: list[dict[str, Any]]) -> None:
    config, written = tmp_path / "stale.yaml", tmp_path / "w.yaml"
    config.write_text(STALE, encoding="utf-8")
    changes = _changes(cli, config, *options)
    removed = [{"key": "model.rope_scaling", "config_value": YARN, "plan_value": None, "removed": True},
               {"key": "explorer.rollout_model.rope_scaling", "config_value": YARN, "plan_value": None,
                "removed": True}]
    if options:  # Trinity 0.5 refuses 0.6's trainer.param_offload: --write removes it
        removed.append({"key": "trainer.param_offload", "config_value": False, "plan_value": None, "removed": True})
    assert changes == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2},
        {"key": "trainer.max_token_len_per_gpu", "config_value": 32768, "plan_value": 16384},
        *trainer, *removed]
    # a script that applies the list gets the config --write writes, as Trinity reads it
    assert cli("--from-config", str(config), "--gpu", "h100", *options, "--write", str(written))[0] == 0
    assert _applied(json.loads(json.dumps(load_config_mapping(STALE, "c"))), changes) == load_config_mapping(
        written.read_text(encoding="utf-8"), "w")
    # the API's list is the same, and its other entries leave `removed` out
    catalog = solver.load_catalog()
    (answer,) = solver.api.answer_query(solver.api.config_query(
        catalog, solver.trinity.read_trinity_config(STALE, "c", {}), gpu="h100"), catalog)
    assert answer.best is not None
    version = "0.5" if options else None
    api = config_key_changes(STALE, answer.best, catalog.model("Qwen3-8B"), environ={}, version=version)
    assert [change.removed for change in api] == [None] * (len(api) - len(removed)) + [True] * len(removed)


def test_a_config_whose_alias_holds_itself_is_refused(cli: Cli, tmp_path: Path) -> None:
    # ``extra: &x {b: *x}`` reads as a mapping that holds itself, which OmegaConf (Trinity's reader) cannot load (a
    # RecursionError): refused in one line naming the key (aliaskeys_s82; before, --json answered and --write's copy
    # had ``{b: null}``, a config Trinity would load but not the user's)
    config = tmp_path / "self.yaml"
    config.write_text(STALE.replace("  param_offload: false\n", "") + "extra: &x {b: *x}\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--json")
    assert (status, out) == (2, "") and err == (
        f"solve: error: --from-config {config}: extra.b repeats extra, the mapping that holds it (an alias, or a <<: "
        "merge, inside its own anchor's value): a value that holds itself, which OmegaConf (and so Trinity) cannot "
        "load, as it recurses without end; give extra.b a value of its own\n")


def test_a_capped_refusal_takes_at_most_the_solves_the_api_page_says(monkeypatch: pytest.MonkeyPatch) -> None:
    page = " ".join((ROOT / "docs" / "api.md").read_text(encoding="utf-8").split())
    assert "those behind its `reason` and `nearest`: at most 14." in page
    assert ("A refusal under a token budget cap takes one solve more, for the smallest cap that trains the length "
            "(`token_budget_cap_raised`): at most 15 then.)") in page
    solves: list[str] = []
    for name in ("answer_for", "nearest_plan", "least_host_plan", "minimize_token_cap"):  # the last: a cap's solve
        counted = getattr(solve_module, name)
        monkeypatch.setattr(solve_module, name, lambda *args, _counted=counted, _name=name, **kwargs: (
            solves.append(_name), _counted(*args, **kwargs))[1])
    question = {"max_model_len": 524288, "budget_gpus": 1, "exact": True, "env": False, "offload": False,
                "host_ram_gb": 64.0, "train_batch_size": 3, "estimate": "never"}
    # test_api's most (14) under --no-estimate, and with a cap of 4096 the cap's solve too: 15
    (answer,) = solver.plan("4B", gpu="a100", **question)
    assert not answer.plans and len(solves) == 14 and "minimize_token_cap" not in solves
    solves.clear()
    (answer,) = solver.plan("4B", gpu="a100", token_budget=4096, **question)
    assert not answer.plans and len(solves) == 15 and solves.count("minimize_token_cap") == 1
    assert answer.token_budget_cap_raised is None  # none trains 524288 tokens on one GPU at any cap


def test_a_plan_write_refuses_still_gets_its_keys_set_and_none_removed(cli: Cli, tmp_path: Path) -> None:
    # --node-gpus 8 plans 8 GPUs on one node, which the config's 2 nodes of 4 do not take: --write refuses it (no
    # copy, nothing removed), and --json answers as before, the keys the plan sets alone
    config = tmp_path / "two-nodes.yaml"
    config.write_text("mode: train\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n"
                      "  max_model_len: 131072\ncluster:\n  node_num: 2\n  gpu_per_node: 4\n", encoding="utf-8")
    status, _, err = cli("--from-config", str(config), "--gpu", "h100", "--node-gpus", "8", "--write",
                         str(tmp_path / "w.yaml"))
    assert status == 2 and err.startswith("solve: error: --node-gpus 8: --write keeps ") and err.count("\n") == 1
    rope = "model.rope_scaling"
    assert _changes(cli, config, "--node-gpus", "8") == [
        {"key": f"{rope}.rope_type", "config_value": None, "plan_value": "yarn"},
        {"key": f"{rope}.factor", "config_value": None, "plan_value": 3.2},
        {"key": f"{rope}.original_max_position_embeddings", "config_value": None, "plan_value": 40960},
        {"key": f"{rope}.rope_theta", "config_value": None, "plan_value": 1000000},
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": None, "plan_value": 8},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 32768}]
