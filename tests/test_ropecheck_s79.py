"""RoPE names left by session 78's reviews (ropecheck, session 79): with no Trinity release named, ``--check`` says of a
``model.rope_scaling`` without its own ``rope_theta`` that Trinity 0.6's trainer fails on it (a ``but:`` line,
``rope-theta-missing``: the config may be 0.5's, whose transformers 4 builds it; refusing it, as ``--trinity-version
0.6`` does, would move more than the 81 tests this line moved); and a Phi-3 past its native context is told that
vLLM's rollout reads past the end of its rotary cache there (``rotary_embedding/base.py:83-92``, ``:152`` in vLLM
0.19.1), sampling those tokens with no rotation the trainer computes: a caution still, since whether the rollout fails
there depends on vLLM's path and has not been run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from test_ropetype_s77 import _phi3_4k

from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.results import no_yarn_follows
from solver.tables import load_catalog, load_model_config
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
YARN = {"rope_type": "yarn", "factor": 1.6, "original_max_position_embeddings": 40960}
FAILS = ("model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as Qwen3-8B's RoPE "
         "parameters, in which transformers 5 finds no base, and fails as it builds the model (a TypeError, "
         "modeling_rope_utils.py:446 in 5.12.1, :488 in 5.25.0), but on 5.12.1 with model.rope_theta set{given}; ")
NO_RELEASE = FAILS + ("Trinity 0.5's transformers 4 builds it; add rope_theta: 1000000 to it (as {write} does; "
                      "harmless on 0.5)")
MENDED = " (the model.rope_theta given mends it there)"
CONFIG = ("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-4B\n  max_model_len: 65536\n"
          "  rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960}\n"
          "cluster: {node_num: 1, gpu_per_node: 8}\nexplorer: {rollout_model: {engine_num: 4}}\n")


def _rope_problems(rope: dict[str, Any], version: str | None, **model: Any) -> list[tuple[str, str]]:
    """The RoPE problems of a Qwen3-8B config at 65536 tokens giving `rope` (and `model`'s other keys)."""
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 65536, "rope_scaling": rope, **model},
               "explorer": {"rollout_model": {"engine_num": 2}}}
    problems = trinity_config_problems(mapping, load_catalog().model("8B"), 6,
                                       version=version)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems if "rope" in problem.code.value]


def test_with_no_release_named_a_mapping_without_its_base_is_a_but_line_naming_06():
    write = "solver.trinity.patch_trinity_config"
    assert _rope_problems(YARN, None) == [("rope-theta-missing", NO_RELEASE.format(given="", write=write))]
    assert _rope_problems(YARN, None, rope_theta=1000000) == [
        ("rope-theta-missing", NO_RELEASE.format(given=MENDED, write=write))]
    assert ConfigProblemCode.ROPE_THETA_MISSING not in REFUSED_CONFIG_CODES
    # 0.6 refuses the same mapping, in the same words but the fix's; 0.5 and a mapping with its base: no line
    assert _rope_problems(YARN, "0.6") == [("rope-theta-missing-refused", FAILS.format(given="") + (
        f"add rope_theta: 1000000 to it (as {write} does)"))]
    assert _rope_problems(YARN, "0.5") == _rope_problems({**YARN, "rope_theta": 1000000}, None) == []


def test_a_mapping_another_line_says_to_remove_is_not_asked_for_its_base_with_no_release_either():
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 32768, "rope_scaling": YARN}}
    codes = [problem.code for problem in trinity_config_problems(mapping, load_catalog().model("8B"), 6)]
    assert codes == [ConfigProblemCode.ROPE_SCALING_UNNEEDED]


def _current(cli: Cli, config: Path, *flags: str) -> dict[str, Any]:
    """`--check --json`'s verdict on `config` (on H100s, with `flags`)."""
    _, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json", *flags)
    return json.loads(out)[0]["current"]


def test_check_says_it_and_write_adds_the_base(cli: Cli, tmp_path: Path):
    config, written = tmp_path / "trinity.yaml", tmp_path / "written.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    _, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check")
    said = NO_RELEASE.format(given="", write="--write").replace("Qwen3-8B", "Qwen3-4B")
    assert err == "" and f"but: {said}" in " ".join(out.split())
    current = _current(cli, config)
    assert (current["refused"], current["config_problem_codes"]) == (False, ["rope-theta-missing"])
    current = _current(cli, config, "--trinity-version", "0.6")
    assert (current["refused"], current["config_problem_codes"]) == (True, ["rope-theta-missing-refused"])
    assert _current(cli, config, "--trinity-version", "0.5")["config_problem_codes"] == []
    status, _, _ = cli("--from-config", str(config), "--gpu", "h100", "--write", str(written))
    assert status == 0 and ("rope_scaling: {rope_type: yarn, factor: 1.6, original_max_position_embeddings: 40960, "
                            "rope_theta: 1000000}") in written.read_text(encoding="utf-8")
    assert _current(cli, written)["config_problem_codes"] == []


def test_a_phi3_past_its_native_context_is_told_vllm_reads_past_its_rotary_cache(tmp_path: Path):
    # before s79: "and vLLM's rotary cache ends (positions past it lead to nan, vLLM warns)"
    assert no_yarn_follows(load_model_config(_phi3_4k(tmp_path)), 8192).endswith(
        "or plan within the native context; vLLM's rollout refuses it, past the 4096 it derives from the model's "
        "config, unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set; past 4096, transformers' trainer rotates by plain RoPE "
        "at positions the model was not trained on, and vLLM's rollout reads past the end of its rotary cache of 4096 "
        "positions (positions past it lead to nan, vLLM warns): it samples those tokens with no rotation the trainer "
        "computes")
