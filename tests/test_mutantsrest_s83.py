"""Tests of session 83's mutantsrest: the mutants sessions 82's passes (mutants42, mutants43) left alive or never ran,
re-anchored to the code as it now is. Each test kills one or more of them by what the code does: a LoRA exclusion
taken as a config's own where the query has no adapter (L-2); verl's numeric ``target_modules`` read as Trinity 0.5's
text (L-26, L-28); a running job whose ways the limit cut short asks no solve's best (S-6); Ctrl-C while the running
jobs are marked keeps the placement (S-20); a purchase Ctrl-C stopped before widening is not widened (S-23). Probing
N-12 found a real bug, fixed: ``--write`` with ``--lora-rank`` over a ``model.lora_configs`` that is an anchored list,
an alias, or in an anchored mapping ended in an internal error (exit 70): the plan's list was written as a scalar."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_api import place
from test_aliaskeys_s82 import HEAD, MODEL
from test_loraexclude2_s82 import CATALOG, MOE_MLP, OWN_LORA
from test_minnodes_s64 import _questions_per_second
from test_runpast_s76 import JOBS, _fleet, _running

import solver
from solver.api import answer_query, config_query
from solver.cluster.options import Planner
from solver.tables import load_fleet
from solver.trinity import config_key_changes, load_config_mapping, patched_trinity_config, read_trinity_config

SEARCH = importlib.import_module("solver.cluster.search")
BUY = importlib.import_module("solver.cluster.buy")
"""The modules (``solver.cluster`` names functions ``search`` and ``buy`` too)."""


# L-2: results.py `Plan._option_exclusion`, a config's own LoRA with no adapter in the query.

def test_a_config_lora_query_without_its_adapter_takes_the_exclusion_as_the_configs_own() -> None:
    # A query made before config_adapter (config_lora alone): its exclusion is the config's, which its check says, so
    # no plan caution repeats it; with the adapter the same query tells them apart, and the exclusion is the config's
    config = read_trinity_config(OWN_LORA.format(own=f", exclude_modules: '{MOE_MLP}'"), "own.yaml", {})
    query = config_query(CATALOG, config, gpu="h100")
    assert query.config_lora and query.config_adapter is not None
    assert query.lora_targets is not None and query.lora_targets.excluded == MOE_MLP
    for asked in (query, query.model_copy(update={"config_adapter": None})):
        (answer,) = answer_query(asked, CATALOG)
        assert answer.best is not None
        assert [code.value for code in answer.best.caution_codes] == ["lora-moe-config-unsaved"]


# L-26, L-28: trinity/config.py `_lora_targets`, verl before 0.8's target_modules a number.

VERL_12 = ("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\nalgorithm: {algorithm_type: grpo}\n"
           "trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model: {lora_rank: 16, target_modules: 12}\n")


def test_verls_numeric_target_modules_is_read_as_its_text_under_05() -> None:
    # Trinity 0.5's ActorModel.target_modules is a string: 12 is '12', a regex that matches no module (not "not one
    # regular expression"), and Trinity saves it into the adapter's config as its characters
    config = read_trinity_config(VERL_12, "verl.yaml", {}, "0.5")
    assert (config.lora_rank, config.lora_targets) == (0, None)
    counted, saved = config.notes
    assert counted.startswith("with LoRA (trainer.trainer_config.actor_rollout_ref.model.lora_rank) the trainer holds "
                              "gradients and optimizer states for the adapter alone, but the verdict and the plans "
                              "count full fine-tuning's, as the tables measured (its target_modules '12' matches no "
                              "module): a LoRA run needs less memory than shown")
    assert saved.startswith("trainer.trainer_config.actor_rollout_ref.model.target_modules '12' is a regular "
                            "expression, which Trinity writes into each checkpoint's lora_adapter/adapter_config.json "
                            "as its single characters (['1', '2', ...])")
    assert [code.value for code in config.note_codes] == ["lora-counted-as-full", "lora-targets-saved-split"]


# S-6: cluster/placements.py `with_solve_best`, a job whose ways the time limit cut short.

def test_a_running_job_whose_ways_were_cut_short_asks_no_solve_best(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a and b run; one question allowed: a gets its ways, b is cut short and kept as it runs (ways_cut_short). Both
    # are on the tables' plans, so each would ask solve's best: a does, b (out of time already) does not.
    running = _running(tmp_path, JOBS)
    fleet = load_fleet(_fleet(tmp_path, JOBS, "now"), CATALOG)
    _questions_per_second(monkeypatch, 0.1)
    asked: list[str] = []
    real = Planner.solve_best

    def recording(self: Planner, pool: Any, job: Any, plan: Any) -> Any:
        asked.append(job.name)
        return real(self, pool, job, plan)

    monkeypatch.setattr(Planner, "solve_best", recording)
    result = place(fleet, catalog=CATALOG, time_limit_s=10.0, current=running)
    assert asked == ["a"]
    assert (result.solve_best_unasked, result.interrupted) == (0, False)
    assert [(placed.job, placed.current, placed.plan.evidence, placed.solve_best) for placed in result.placements] == [
        ("a", "stays", "documented", None), ("b", "stays", "documented", None)]


# S-20: cluster/search.py `_marked_current`, Ctrl-C while the running jobs are marked.

def test_ctrl_c_while_the_running_jobs_are_marked_keeps_the_placement_marked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    running = _running(tmp_path, JOBS)
    fleet = load_fleet(_fleet(tmp_path, JOBS, "now"), CATALOG)
    calls: list[bool] = []
    real = SEARCH.with_current

    def ctrl_c_on_the_first(*args: Any, **kwargs: Any) -> Any:
        calls.append(True)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(SEARCH, "with_current", ctrl_c_on_the_first)
    result = place(fleet, catalog=CATALOG, current=running)
    assert (len(calls), result.interrupted) == (2, True)  # marked again, Ctrl-C held
    assert [(placed.job, placed.current) for placed in result.placements] == [("a", "stays"), ("b", "stays")]


# S-23: cluster/buy.py, widening after Ctrl-C.

ONE_PROBE = ("pools: [{name: a100, gpu: A100-80GB, nodes: 0, gpus_per_node: 8}]\n"
             "jobs: [{name: probe, model: 0.6B, max_model_len: 8192}]\n")


def test_a_purchase_ctrl_c_stopped_in_its_search_is_not_widened(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text(ONE_PROBE, encoding="utf-8")
    whole = solver.buy_nodes(path)
    assert (whole.nodes, whole.interrupted, [(p.job, p.trainer_gpus, p.widened_from) for p in whole.placements]) == (
        1, False, [("probe", 8, 6)])
    widened: list[bool] = []
    widen_jobs, solve_stages = SEARCH.widen_jobs, BUY.solve_stages

    def recording(*args: Any, **kwargs: Any) -> Any:
        widened.append(True)
        return widen_jobs(*args, **kwargs)

    def ctrl_c_after(*args: Any, **kwargs: Any) -> Any:  # as if Ctrl-C came as the first stage ended
        staged = solve_stages(*args, **kwargs)
        args[3].caught = True
        return staged

    monkeypatch.setattr(SEARCH, "widen_jobs", recording)
    monkeypatch.setattr(BUY, "solve_stages", ctrl_c_after)
    cut = solver.buy_nodes(path)
    assert (cut.nodes, cut.interrupted, widened) == (1, True, [])
    assert [(p.job, p.widened_from) for p in cut.placements] == [("probe", None)]


# N-11, N-12 probed: an anchored list where the plan writes model.lora_configs (--write crashed: a real bug, fixed).

LORA_HEAD = "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
MODEL_KEYS = "model_path: Qwen/Qwen3-8B, max_model_len: 16384"


ALIAS_WORDS = ("empty is the anchor &l, which other keys repeat (*l): the patch sets model.lora_configs to "
               "[{lora_rank: 16}], written out (no longer *l), and leaves it at ")
MAPPING_WORDS = ("base is the anchor &m, which model repeats (*m): the patch's changes in it (lora_configs to "
                 "[{lora_rank: 16}], ...) reach it too")
"""The anchor's place named, ``base`` (session 83, applyalias; before, the path the change was set through)."""


@pytest.mark.parametrize(("given", "warning"), [
    (f"model: {{{MODEL_KEYS}, lora_configs: &l []}}\n", None),
    (f"empty: &l []\nmodel: {{{MODEL_KEYS}, lora_configs: *l}}\n", ALIAS_WORDS + "[]"),
    (f"empty: &l adapter\nmodel: {{{MODEL_KEYS}, lora_configs: *l}}\n", ALIAS_WORDS + "adapter"),
    (f"base: &m {{{MODEL_KEYS}, lora_configs: []}}\nmodel: *m\n", MAPPING_WORDS)],
    ids=["anchored list", "alias of a list", "alias of text", "in an anchored mapping"])
def test_write_sets_the_lora_configs_list_over_an_anchor(
        cli: Any, tmp_path: Path, given: str, warning: str | None) -> None:
    # Each ended in an internal error (exit 70): the plan's list taken as a scalar (its anchor kept, the anchor's
    # words, the one value every alias takes); Trinity refuses each as written (no LoRA config, or no list)
    config, written = tmp_path / "c.yaml", tmp_path / "w.yaml"
    config.write_text(given + LORA_HEAD, encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--lora-rank", "16", "--write", str(written))
    warnings = [line.removeprefix(f"solve: warning: {written}: ") for line in err.splitlines()]
    assert status == 0 and out.endswith(f"wrote {written}\n")
    assert [line for line in warnings if "is the anchor" in line] == ([warning] if warning else [])
    data = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert data["model"]["lora_configs"] == [{"lora_rank": 16}]
    assert {key: value for key, value in data.items() if key in ("empty", "base")} == (
        {"empty": yaml.safe_load(given)["empty"]} if "empty" in given else
        {"base": data["model"]} if "base" in given else {})


# A-26 (re-anchored in `_merge_source`): a real bug, fixed. Of a ``<<: [*o, *t]`` list whose two mappings both hold
# the plan's value in the copy, the place was the first (other's), which the patch never changed: the config as read
# (PyYAML 6.0.4) takes the last's, trainer's, whose value the patch changed.

def test_a_merge_list_key_is_written_where_the_reading_takes_it_where_two_hold_its_value() -> None:
    text = (HEAD + MODEL + "other: &o {ulysses_sequence_parallel_size: 2, y: 1}\ntrainer: &t\n"
            "  ulysses_sequence_parallel_size: 1\nexplorer:\n"
            "  rollout_model: {engine_num: 4, tensor_parallel_size: 1}\n"
            "  dummy:\n    <<: [*o, *t]\n    own: 1\n")
    assert load_config_mapping(text, "c")["explorer"]["dummy"]["ulysses_sequence_parallel_size"] == 1  # trainer's
    query = config_query(CATALOG, read_trinity_config(text, "c", {}), gpu="h100")
    (answer,) = answer_query(query, CATALOG)
    assert answer.best is not None and (answer.best.sp, answer.best.max_token_len_per_gpu) == (2, 16384)
    model = CATALOG.model("Qwen3-8B")
    assert [change.model_dump(mode="json") for change in config_key_changes(text, answer.best, model, environ={})] == [
        {"key": "trainer.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2},
        {"key": "explorer.dummy.ulysses_sequence_parallel_size", "config_value": 1, "plan_value": 2,
         "written_at": "trainer.ulysses_sequence_parallel_size"},
        {"key": "trainer.max_token_len_per_gpu", "config_value": None, "plan_value": 16384},
        {"key": "explorer.dummy.max_token_len_per_gpu", "config_value": None, "plan_value": 16384,
         "written_at": "trainer.max_token_len_per_gpu"}]
    copy = load_config_mapping(patched_trinity_config(text, answer.best, model, environ={}).text, "c")
    assert (copy["other"], copy["explorer"]["dummy"]["ulysses_sequence_parallel_size"]) == (
        {"ulysses_sequence_parallel_size": 2, "y": 1}, 2)
