"""RoPE names left by session 78's reviews (ropecheck, session 79): with no Trinity release named, ``--check`` says of a
``model.rope_scaling`` without its own ``rope_theta`` that Trinity 0.6's trainer fails on it (a ``but:`` line,
``rope-theta-missing``: the config may be 0.5's, whose transformers 4 builds it; refusing it, as ``--trinity-version
0.6`` does, would move more than the 81 tests this line moved); and a Phi-3 past its native context is told that
vLLM's rollout reads past the end of its rotary cache there (``rotary_embedding/base.py:83-92``, ``:152`` in vLLM
0.19.1), sampling those tokens with no rotation the trainer computes: a caution still, since whether the rollout fails
there depends on vLLM's path and has not been run. And LoRA names: a Qwen3-MoE's dense layers (``mlp_only_layers``,
``decoder_sparse_step``, read from its config.json, refused before) hold a gated MLP whose ``gate_proj``, ``up_proj``
and ``down_proj`` a regex adapts under transformers 4 and PEFT converts to the routed experts' under 5; StableLM's
per-head norms (``self_attn.q_layernorm.norms.H``) are layer norms PEFT refuses to adapt."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_ropetype_s77 import CONFIGS, _phi3_4k

from solver.memory import lora_parameters
from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.results import no_yarn_follows
from solver.tables import load_catalog, load_model_config
from solver.tables.peft_match import peft_target_refusal
from solver.tables.peft_names import MLP, PEFT_NAMES_BY_MODEL_TYPE, LoraTargets
from solver.tables.schema import Model
from solver.tables.text import TableError
from solver.trinity import trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]
YARN = {"rope_type": "yarn", "factor": 1.6, "original_max_position_embeddings": 40960}
FAILS = ("model.rope_scaling has no rope_theta: Trinity 0.6's trainer on verl before 0.8 sets it as Qwen3-8B's RoPE "
         "parameters, in which transformers 5 finds no base, and fails as it builds the model (a TypeError, "
         "modeling_rope_utils.py:446 in 5.12.1, :488 in 5.25.0) unless model.rope_theta is set and "
         "transformers is 5.12.1{given}; ")
NO_RELEASE = FAILS + ("Trinity 0.5.0's and 0.5.2's {on_05}, and 0.5's transformers 4 builds "
                      "it; add rope_theta: 1000000 to it (as {write} does; harmless on transformers 4)")
MENDED = " (the model.rope_theta given mends it there)"
FAIL_05 = "fail alike on transformers 5 unless model.rope_theta is set"
MENDED_05 = "build it on transformers 5 with the model.rope_theta given"  # as under 0.5, which says nothing (s81)
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
    assert _rope_problems(YARN, None) == [
        ("rope-theta-missing", NO_RELEASE.format(given="", write=write, on_05=FAIL_05))]
    assert _rope_problems(YARN, None, rope_theta=1000000) == [
        ("rope-theta-missing", NO_RELEASE.format(given=MENDED, write=write, on_05=MENDED_05))]
    assert ConfigProblemCode.ROPE_THETA_MISSING not in REFUSED_CONFIG_CODES
    # 0.6 refuses the same mapping, in the same words but the fix's; a mapping with its base: no line; 0.5 a line
    # of its own since s81 (tests/test_persona62_s81.py)
    assert _rope_problems(YARN, "0.6") == [("rope-theta-missing-refused", FAILS.format(given="") + (
        f"add rope_theta: 1000000 to it (as {write} does)"))]
    assert _rope_problems({**YARN, "rope_theta": 1000000}, None) == []


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
    said = NO_RELEASE.format(given="", write="--write", on_05=FAIL_05).replace("Qwen3-8B", "Qwen3-4B")
    assert err == "" and f"but: {said}" in " ".join(out.split())
    current = _current(cli, config)
    assert (current["refused"], current["config_problem_codes"]) == (False, ["rope-theta-missing"])
    current = _current(cli, config, "--trinity-version", "0.6")
    assert (current["refused"], current["config_problem_codes"]) == (True, ["rope-theta-missing-refused"])
    assert _current(cli, config, "--trinity-version", "0.5")["config_problem_codes"] == ["rope-theta-missing"]  # s81
    assert _current(cli, config, "--trinity-version", "0.5.1")["config_problem_codes"] == []
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


def _qwen3_moe(tmp_path: Path, **keys: Any) -> Model:
    """Qwen3-30B-A3B's config.json (48 layers, 128 experts 768 wide, a dense MLP 6144 wide) with `keys` besides."""
    config = json.loads((CONFIGS / "Qwen3-30B-A3B.json").read_text(encoding="utf-8"))
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**config, **keys}), encoding="utf-8")
    return load_model_config(path)


@pytest.mark.parametrize(("keys", "dense"), [({"mlp_only_layers": [0, 47]}, 2), ({"decoder_sparse_step": 2}, 24),
                                             ({"mlp_only_layers": [1], "decoder_sparse_step": 2}, 25), ({}, 0)])
def test_a_qwen3_moes_dense_layers_are_read(tmp_path: Path, keys: dict[str, Any], dense: int):
    # Qwen3MoeDecoderLayer: experts where the index is not in mlp_only_layers and index + 1 divides by the step
    moe = _qwen3_moe(tmp_path, **keys).moe
    assert moe is not None and (moe.dense_layers, moe.dense_intermediate_size) == (dense, 6144 if dense else 0)


def test_a_qwen3_moe_with_no_expert_layer_is_refused(tmp_path: Path):
    with pytest.raises(TableError, match=r"mlp_only_layers \[0, 1\] and decoder_sparse_step 2: leave none of "
                                         r"num_hidden_layers \(2\) holding the experts$"):
        _qwen3_moe(tmp_path, mlp_only_layers=[0, 1], decoder_sparse_step=2, num_hidden_layers=2)


DENSE_MLP = r".*mlp\.(gate|up|down)_proj"
"""A regex on the dense layers' MLP: transformers 4 holds no other module of those names (its experts' are
``mlp.experts.E.gate_proj``); under transformers 5 PEFT takes their last names for the routed experts'."""


@pytest.mark.parametrize(("keys", "rank", "counts"), [
    # rank 8, 2 dense layers: (8 x (2048 + 6144)) x 3 x 2 = 393216 under transformers 4; under 5 the routed experts
    # of the 46 others, 8 x (1536 + 2048) x 256 + 8 x (2048 + 768) x 128, x 46 = 470286336
    ({"mlp_only_layers": [0, 47]}, 8, (393216, 470286336)),
    ({}, 8, (0, 0)),  # no dense layer: the regex matches nothing (before s79 a config with them was refused)
])
def test_a_regex_on_the_dense_layers_counts_their_mlp(tmp_path: Path, keys: dict[str, Any], rank: int,
                                                      counts: tuple[int, int]):
    model = _qwen3_moe(tmp_path, **keys).model_copy(update={"lora_targets": LoraTargets(DENSE_MLP)})
    assert (lora_parameters(model, rank, "separate"), lora_parameters(model, rank, "fused")) == counts


def test_all_linear_adapts_the_dense_layers_mlp_under_transformers_4_alone(tmp_path: Path):
    dense, every = _qwen3_moe(tmp_path, mlp_only_layers=[0, 47]), _qwen3_moe(tmp_path)
    # transformers 4: 2 layers' 128 experts x 3 projections (8 x 2816 each) and router (8 x 2176) go, the MLP comes
    assert lora_parameters(every, 8, "separate") - lora_parameters(dense, 8, "separate") == (
        2 * 128 * 3 * 8 * 2816 + 2 * 8 * 2176 - 393216) == 16943104
    # transformers 5: their fused experts and router go, and nothing adapts the MLP (PEFT converts its names)
    assert lora_parameters(every, 8, "fused") - lora_parameters(dense, 8, "fused") == (
        2 * (8 * 3584 * 256 + 8 * 2816 * 128) + 2 * 8 * 2176) == 20482048
    assert dense.peft_names_of("separate").adapted[4:7] == MLP and "mlp.act_fn" in dense.peft_names.others
    assert set(MLP) <= set(dense.peft_names.others) and every.peft_names == PEFT_NAMES_BY_MODEL_TYPE["qwen3_moe"]


@pytest.mark.parametrize("pattern", [r".*norms\.\d+", r".*\.k_layernorm\.norms\.7"])
def test_a_regex_on_stablelms_per_head_norms_is_refused_as_peft_refuses_a_layer_norm(pattern: str):
    # StableLmLayerNormPerHead: one nn.LayerNorm per head, under .norms.H; before s79 these matched no module
    assert peft_target_refusal(pattern, None, PEFT_NAMES_BY_MODEL_TYPE["stablelm"]) == (
        f"matches model.layers.N.self_attn.{'q' if 'd+' in pattern else 'k'}_layernorm.norms.H, which PEFT cannot "
        "adapt (\"Target module ... is not supported\": it adapts linear layers and embeddings alone)")
