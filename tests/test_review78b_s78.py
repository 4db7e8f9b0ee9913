"""review78b (session 78): a senior engineer's review of the session's later merges. A PhiMoE's RoPE scaling by a
factor is judged by the transformers major version the release's trainer runs on: Trinity 0.5.0 and 0.5.2 take 4 or
5, so the mscales transformers 5 reads at every step are asked for there too (phi3rope asked them of 0.6 alone), and
transformers 5 reads ``original_max_position_embeddings`` before the mscale it picks (``modeling_phimoe.py:107`` in
5.12.1 and 5.3.0), which its init functions fill in for a ``yarn`` alone, so a ``linear`` with both mscales but not
that key is refused too."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_phi3rope_s78 import LACKS_06, YARN, _phimoe

from solver.tables import TrinityVersion
from solver.tables.bounds import ExpertLayout
from solver.tables.rope_types import LONGROPE_ACCEPTED, PHIMOE_NO_YARN, ROPE_BY_MODEL_TYPE
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
UNTRAINED = (f"model.rope_scaling: rope_type yarn on PhiMoE-4k, for whose model_type phimoe rft-solver writes no YaRN: "
             f"{PHIMOE_NO_YARN}; remove it (as solver.trinity.patch_trinity_config does), and {LONGROPE_ACCEPTED}")


def _rope_problems(tmp_path: Path, rope: dict[str, Any], version: TrinityVersion | None,
                   experts: ExpertLayout) -> list[tuple[str, str]]:
    """The RoPE problems of a mode-train config giving a PhiMoE `rope` at 16384 tokens, for `version` and `experts`."""
    mapping = {"mode": "train", "model": {"model_path": "/nowhere/model", "max_model_len": 16384, "rope_scaling": rope}}
    return [(problem.code.value, problem.words) for problem in trinity_config_problems(
        mapping, _phimoe(tmp_path), 8, version=version, experts=experts) if "rope" in problem.code.value]


@pytest.mark.parametrize(("version", "experts", "expected"), [
    ("0.5", "separate", ("rope-scaling-untrained", UNTRAINED)),  # 0.5.1: transformers 4 alone, which runs it
    ("0.5", "either", ("rope-scaling-unbuilt-refused", f"model.rope_scaling: rope_type yarn on PhiMoE-4k {LACKS_06}")),
    ("0.6", "fused", ("rope-scaling-unbuilt-refused", f"model.rope_scaling: rope_type yarn on PhiMoE-4k {LACKS_06}")),
])
def test_a_phimoes_yarn_is_judged_by_the_transformers_its_release_runs(tmp_path: Path, version: TrinityVersion,
                                                                       experts: ExpertLayout,
                                                                       expected: tuple[str, str]):
    # Before review78b, 0.5.0's and 0.5.2's ("either") was the caution alone, though a trainer on transformers 5
    # fails with a KeyError on short_mscale at its first step.
    assert _rope_problems(tmp_path, YARN, version, experts) == [expected]


def test_transformers_5_reads_a_phimoes_original_length_too(tmp_path: Path):
    rope = {"rope_type": "linear", "factor": 4.0, "short_mscale": 1.0, "long_mscale": 1.2}
    problems = _rope_problems(tmp_path, rope, "0.6", "fused")
    assert problems[0] == ("rope-scaling-unbuilt-refused", (
        "model.rope_scaling: rope_type linear on PhiMoE-4k lacks original_max_position_embeddings, which the trainer "
        + LACKS_06.split("which the trainer ", 1)[1]))
    assert [code for code, _ in problems] == ["rope-scaling-unbuilt-refused"]


@pytest.mark.parametrize(("release", "codes"), [
    ("0.5.1", ["rope-scaling-untrained"]), ("0.5.2", ["rope-scaling-unbuilt-refused"]),
    ("0.5", ["rope-scaling-unbuilt-refused"]), ("0.6", ["rope-scaling-unbuilt-refused"])])
def test_the_check_judges_a_phimoes_yarn_by_the_release_named(cli: Cli, tmp_path: Path, release: str,
                                                              codes: list[str]):
    _phimoe(tmp_path)
    config = tmp_path / "trinity.yaml"
    config.write_text("mode: train\nmodel:\n  model_path: /nowhere/PhiMoE-4k\n  max_model_len: 16384\n"
                      "  rope_scaling: {rope_type: yarn, factor: 4.0, original_max_position_embeddings: 4096}\n"
                      "algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "buffer: {train_batch_size: 64, batch_size: 8}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--model-config", str(tmp_path / "config.json"), "--gpu",
                         "h100", "--trinity-version", release, "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["config_problem_codes"]) == (1, codes)


@pytest.mark.parametrize(("rope", "transformers", "missing"), [
    # transformers 5's init functions fill a yarn's original length in (standardize_rope_params), not a linear's
    ({"rope_type": "yarn", "factor": 4.0, "short_mscale": 1.0, "long_mscale": 1.2}, (5,), None),
    ({"rope_type": "yarn", "factor": 4.0, "short_mscale": 1.0, "long_mscale": 1.2}, (4,),
     ("original_max_position_embeddings",)),
    ({"rope_type": "linear", "factor": 4.0, "short_mscale": 1.0, "long_mscale": 1.2}, (5,),
     ("original_max_position_embeddings",)),
    ({"rope_type": "linear", "factor": 4.0}, (5,), ("original_max_position_embeddings", "short_mscale", "long_mscale")),
    ({"rope_type": "yarn", "factor": 4.0}, (5,), ("short_mscale", "long_mscale")),
])
def test_the_keys_a_phimoes_trainer_lacks_per_transformers(rope: dict[str, Any], transformers: tuple[int, ...],
                                                           missing: tuple[str, ...] | None):
    failure = ROPE_BY_MODEL_TYPE["phimoe"].trainer_failure(rope, transformers)
    assert (failure.missing if failure else None, failure.read.transformers if failure else None) == (
        missing, transformers[0] if missing else None)
