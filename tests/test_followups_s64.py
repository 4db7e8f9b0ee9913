"""s64 follow-ups: the cluster search keeps the more-nodes questions their share only where a job's length may be
beyond a pool's reach, no longer where the whole pool trains it and only the rollout beside leaves it no layout
(`reasons_may_ask_reach`); and `solver.trinity_settings` makes an answer's settings without the fragment's text
(`plan_settings`, as ``solve --json``'s ``apply``), loading none of its modules, the same settings as before (since
s66 they are checked against Trinity's rules, which loads ruamel)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_clustersearch_s64 import A100, TWO_14B, _Recorder

import solver
from solver.api import ANSWER_BATCH_SOURCE, fragment_engines, fragment_layout
from solver.results import Answer, TrinitySettings
from solver.rules import API_OPTIONS
from solver.tables import DETERMINISTIC_PER_SECOND, load_catalog, trinity_release
from solver.trinity import plan_fragment

FULL = 0.6 * DETERMINISTIC_PER_SECOND * 10
"""The first stage's deterministic time at a 10 s limit where nothing is kept for the questions (its 60%)."""


def test_a_pool_that_trains_the_length_but_not_beside_the_rollout_leaves_the_search_its_full_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    recorder = _Recorder(monkeypatch)
    # y is left out of a100; quad's 4 A100s train Qwen3-14B at 65536 on all 4, which its 2 rollout GPUs leave no
    # layout for: its reason asks no more-nodes question, and the one question asked before the search (the whole
    # pool at 65536, on the questions' deterministic time) says so (before, the stages got 2% less). `spent` is the
    # run's: the stages got all but it, so nothing was asked after them.
    quad = {"name": "quad", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 4}
    work, spent, result = recorder.first_stage({"pools": [A100, quad], "jobs": TWO_14B}, tmp_path)
    assert 0 < spent < 1e-4 and work == pytest.approx(0.6 * (DETERMINISTIC_PER_SECOND * 10 - spent), abs=1e-12)
    [unplaced] = result.unplaced
    assert (unplaced.job, [(pool.reason_code, pool.more_nodes_reach) for pool in unplaced.pools]) == (
        "y", [("no-room", None), ("no-layout-beside-rollout", None)])
    assert recorder.first_stage({"pools": [A100, quad], "jobs": TWO_14B}, tmp_path)[:2] == (work, spent)


@pytest.mark.parametrize("quad", [{"name": "quad", "gpu": "L40S-48GB", "nodes": 1, "gpus_per_node": 4},
                                  {"name": "quad", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 3}])
def test_a_pool_the_length_is_beyond_keeps_the_questions_their_share(
        quad: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # 65536 is beyond 4 L40Ss and 3 A100s (each trains Qwen3-14B at some length): y's reason there asks whether more
    # nodes reach it (and it does), on the 2% the search kept: the stages get 98% of the run's deterministic time.
    recorder = _Recorder(monkeypatch)
    work, _, result = recorder.first_stage({"pools": [A100, quad], "jobs": TWO_14B}, tmp_path)
    assert work == pytest.approx(0.98 * FULL, abs=1e-9)
    [unplaced] = result.unplaced
    assert [(pool.reason_code, pool.plan_reason_code, pool.more_nodes_reach) for pool in unplaced.pools] == [
        ("no-room", None, None), ("no-plan", "length-beyond-reach", True)]


QUERIES: list[dict[str, Any]] = [
    {"model": "8B", "gpu": "a100", "budget_gpus": 8, "max_model_len": 131072, "rollout_gpus": 4},
    {"model": "8B", "gpu": "h100", "budget_gpus": 8, "max_model_len": 32768, "rollout_gpus": 0,
     "train_batch_size": 48},
    {"model": "llama-3.1-8b", "gpu": "h100", "budget_gpus": 8, "max_model_len": 200000},
    {"model": "14B", "gpu": "h20", "budget_gpus": 8, "max_model_len": 65536, "offload": True},
    {"model": "8B", "gpu": "mi300x", "budget_gpus": 8, "objective": "max_len"},
    {"model": "8B", "gpu": "a100", "budget_gpus": 16, "max_model_len": 163840, "rollout_gpus": 8, "node_gpus": 8},
]
"""Answers with a cluster section (on one node, on two), a train batch in mode train, YaRN and vLLM's long-length
variable, Offload, ROCm."""
VERSIONS = [None, "0.5", "0.6"]

SETTINGS = """\
import sys
import solver
settings = [solver.trinity_settings(solver.plan(**query)[0], version=version).model_dump_json()
            for query in {queries!r} for version in {versions!r}]
print(settings)
print(sorted(name for name in sys.modules if name.startswith("solver.trinity")))
"""


def _fragment_settings(answer: Answer, version: str | None) -> TrinitySettings:
    """The settings of `trinity_config`'s fragment of `answer`, as `trinity_settings` gave them before s64: with the
    fragment's text (`plan_fragment`)."""
    catalog, release = load_catalog(), trinity_release("version", version)
    assert answer.best is not None
    nodes, rollout = fragment_layout(answer)
    engines = fragment_engines(answer, catalog)
    return plan_fragment(answer.best.with_batch_caution(answer.train_batch_size, ANSWER_BATCH_SOURCE, release),
                         catalog.model(answer.model), rollout, gpu=answer.gpu, nodes=nodes,
                         engines=(0, engines.size if engines else 1), version=release,
                         rocm=catalog.gpu(answer.gpu).rocm, train_batch_size=answer.train_batch_size,
                         node_gpus=answer.node_gpus, host_ram_gb=answer.host_ram_gb, option_names=API_OPTIONS)[1]


def test_trinity_settings_make_no_fragment_text_and_give_the_fragments_settings():
    result = subprocess.run([sys.executable, "-c", SETTINGS.format(queries=QUERIES, versions=VERSIONS)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    dumped, loaded = result.stdout.splitlines()
    # The settings and their check (s66), none of the text's modules (fragment, patch, config).
    assert ast.literal_eval(loaded) == ["solver.trinity", "solver.trinity.checks", "solver.trinity.interpolation",
                                        "solver.trinity.keys", "solver.trinity.plan_keys", "solver.trinity.reader",
                                        "solver.trinity.settings"]
    expected = [_fragment_settings(solver.plan(**query)[0], version) for query in QUERIES for version in VERSIONS]
    given = [TrinitySettings.model_validate(json.loads(one)) for one in ast.literal_eval(dumped)]
    assert given == expected
    # The answers are of the kinds QUERIES names (so the comparison covers them).
    configs = [settings.config for settings in expected]
    assert {"cluster", "buffer", "model", "trainer"} <= {section for config in configs for section in config}
    assert any("rope_scaling" in config["model"] for config in configs)
    assert any("VLLM_ALLOW_LONG_MAX_MODEL_LEN" in settings.environment for settings in expected)
    assert any(settings.trinity_06_keys for settings in expected) and not all(s.trinity_06_keys for s in expected)


def test_trinity_settings_refuse_as_trinity_config_does():
    [answer] = solver.plan("8B", gpu="a100", budget_gpus=1, max_model_len=262144)
    assert answer.best is None
    for function in (solver.trinity_config, solver.trinity_settings):
        with pytest.raises(solver.QueryError, match=r"^A100-80GB: "):
            function(answer)
    [answer] = solver.plan("8B", gpu="a100", budget_gpus=4, max_model_len=32768)
    for function in (solver.trinity_config, solver.trinity_settings):
        with pytest.raises(solver.QueryError, match=r"^version takes "):
            function(answer, version="0.4")
