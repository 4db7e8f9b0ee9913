"""Session 81, loracautions: LoRA cautions left by s80's reviews. (a) An exclusion that leaves out every layer the model
has (``.*layers\\.([0-9]|[12][0-9]|3[0-5])\\..*`` on Qwen3-8B's 36) is refused in PEFT's own words, a
``NoMatchingPeftModuleError`` (a ``ValueError``) from ``inject_adapter`` (``tuners/tuners_utils.py:1051`` to ``:1086``
in peft 0.21.2): "No modules were targeted for adaptation", or "All modules were excluded" where it leaves out every
module of the model; before, "matches no module". (b) On a mixture of experts whose LoRA config PEFT converts
(transformers 5: Trinity 0.6, 0.5.0, 0.5.2), the router and the routed experts are adapted as parameters, which
``exclude_modules`` does not leave out (``_inject_parameters``): ``all-linear`` less ``.*\\.mlp\\..*`` on
Qwen3-30B-A3B still adapts them (a ``but:`` line, ``lora-excluded-adapted``), and a regex's experts are counted in the
layers it excludes too. (c) A config read alone assumes no model type where none takes its regex. (d) ``' all-linear
'`` is a regex to PEFT, which lowers ``target_modules`` but strips nothing: refused, saying so. (e) A
``model.rope_scaling`` without ``rope_theta`` is a ``but:`` line under ``--trinity-version 0.5`` (0.5.0 takes any
transformers, 0.5.2 up to 5.3.0, whose RoPE setter fails alike), none under 0.5.1 (``transformers<5.0.0``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.memory import lora_parameters
from solver.query import REFUSED_CONFIG_CODES, ConfigProblemCode
from solver.tables.peft_match import excluded_yet_adapted, excludes_every_module, peft_target_refusal
from solver.tables.peft_names import LoraTargets
from solver.trinity import read_trinity_config, trinity_config_problems
from solver.trinity.checks import lora_targets_problem

Cli = Callable[..., tuple[int, str, str]]
CATALOG = solver.load_catalog()
EVERY_LAYER_OF_36 = "(.*layers\\.([0-9]|[12][0-9]|3[0-5])\\..*)"
MEMORY = ("memory", "--model", "8B", "--gpu", "h100", "--gpus", "1", "--len", "16384", "--env", "--lora-rank", "64")
NAMES_8B = ("model.layers.N.self_attn.{q,k,v,o}_proj, model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens "
            "and lm_head")


# (a) An exclusion of every layer the model has, in PEFT's words.

def test_an_exclusion_of_each_of_the_models_layers_is_refused_as_peft_refuses_it(cli: Cli) -> None:
    # before: "--lora-targets 'all-linear' matches no module of Qwen3-8B (..., N from 0 to 35)"
    status, out, err = cli(*MEMORY, "--lora-exclude", EVERY_LAYER_OF_36)
    assert (status, out, err) == (2, "", (
        f"solve memory: error: --lora-exclude '{EVERY_LAYER_OF_36}', on Qwen3-8B, leaves out every module all-linear "
        "matches (\"No modules were targeted for adaptation\"): exclude fewer, or remove it\n"))
    # before: "... leaves what target_modules '.*\\.q_proj' adapts so that it matches no module: exclude fewer ..."
    problem = lora_targets_problem(".*\\.q_proj", EVERY_LAYER_OF_36, CATALOG.model("Qwen3-8B"))
    assert problem is not None and problem.code is ConfigProblemCode.LORA_CONFIGS_REFUSED
    assert problem.words == (
        f"model.lora_configs[0].exclude_modules '{EVERY_LAYER_OF_36}', on Qwen3-8B (a dense model), leaves out every "
        "module target_modules '.*\\.q_proj' matches (\"No modules were targeted for adaptation\"): peft matches it "
        f"whole (re.fullmatch) against each module's full name ({NAMES_8B}), and Trinity fails as it makes the "
        "adapter: exclude fewer, or remove it")
    # one layer fewer leaves the last layer's: taken
    assert lora_targets_problem(".*\\.q_proj", "(.*layers\\.([0-9]|[12][0-9]|3[0-4])\\..*)",
                                CATALOG.model("Qwen3-8B")) is None


def test_an_exclusion_of_every_module_of_the_models_layers_is_all_modules_excluded(cli: Cli) -> None:
    # it leaves in the names of layers 36 and on, which Qwen3-8B lacks: every module of its own is excluded
    excluded = "(?!model\\.layers\\.(3[6-9]|[4-9][0-9]|1[0-9][0-9])).*"
    model = CATALOG.model("Qwen3-8B")
    assert excludes_every_module(excluded, model.peft_names, partial(model.module_layers, names=model.peft_names))
    assert not excludes_every_module(excluded, model.peft_names)  # on 128 layers, some are left
    status, _, err = cli(*MEMORY, "--lora-exclude", excluded)
    assert (status, err) == (2, (
        f"solve memory: error: --lora-exclude '{excluded}', on Qwen3-8B, leaves out every module all-linear matches "
        "(\"All modules were excluded\"): exclude fewer, or remove it\n"))


def test_the_config_check_of_such_an_exclusion_refuses_it_in_the_same_words(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "lora.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-8B\n  max_model_len: 16384\n  lora_configs:\n"
                      f"    - {{lora_rank: 16, exclude_modules: '{EVERY_LAYER_OF_36}'}}\n", encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json")
    current = json.loads(out)[0]["current"]
    assert (status, current["refused"], current["config_problem_codes"][0]) == (1, True, "lora-configs-refused")
    assert ("leaves out every module target_modules 'all-linear' matches (\"No modules were targeted for "
            "adaptation\")") in current["config_problems"][0]


# (b) A mixture of experts' router and routed experts, adapted whatever exclude_modules says.

def _lora_problems(model: str, lora: dict[str, Any], version: str | None = None,
                   experts: str = "fused") -> list[tuple[str, str]]:
    mapping = {"model": {"model_path": "x", "max_model_len": 8192, "lora_configs": [lora]}}
    problems = trinity_config_problems(mapping, CATALOG.model(model), 8, version=version,  # type: ignore[arg-type]
                                       experts=experts)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems
            if problem.code.value.startswith("lora") and problem.code not in (
                ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED, ConfigProblemCode.LORA_MOE_CONFIG_UNSAVED_REFUSED)]


EXCLUDED_ADAPTED = (
    "model.lora_configs[0].exclude_modules '.*\\.mlp\\..*' matches Qwen3-30B-A3B's router (mlp.gate) and routed "
    "experts (mlp.experts.gate_proj, mlp.experts.up_proj, mlp.experts.down_proj), but target_modules 'all-linear' "
    "adapts them all the same, in every layer, on transformers 5 ({release}): peft 0.21.2 converts a mixture of "
    "experts' LoRA config and adapts the router and the routed experts as target_parameters (all-linear adds them by "
    "name, whatever exclude_modules says), which exclude_modules does not leave out (_inject_parameters); rft-solver "
    "counts the adapter on them: give target_modules .*\\.(q_proj|k_proj|v_proj|o_proj), which adapts the other "
    "modules alone")


@pytest.mark.parametrize(("version", "experts", "release"), [
    (None, "fused", "Trinity 0.6's, and 0.5.0's and 0.5.2's where they run on it"),
    ("0.6", "fused", "Trinity 0.6's"),
    ("0.5", "either", "Trinity 0.5.0's and 0.5.2's, where they run on it")])
def test_all_linear_less_the_mlp_on_qwen3_moe_is_a_but_line(version: str | None, experts: str, release: str) -> None:
    lora = {"lora_rank": 16, "exclude_modules": ".*\\.mlp\\..*"}
    assert _lora_problems("Qwen3-30B-A3B", lora, version, experts) == [
        ("lora-excluded-adapted", EXCLUDED_ADAPTED.format(release=release))]
    assert ConfigProblemCode.LORA_EXCLUDED_ADAPTED not in REFUSED_CONFIG_CODES


def test_no_line_where_the_exclusion_does_what_it_says() -> None:
    lora = {"lora_rank": 16, "exclude_modules": ".*\\.mlp\\..*"}
    assert _lora_problems("Qwen3-30B-A3B", lora, "0.5", "separate") == []  # 0.5.1's transformers 4 excludes them
    assert _lora_problems("Qwen3-8B", lora) == []  # a dense model's MLP: nn.Linear modules, excluded
    assert _lora_problems("Qwen3-30B-A3B", {"lora_rank": 16, "exclude_modules": ".*\\.q_proj"}) == []
    model = CATALOG.model("Qwen3-30B-A3B")
    layers = partial(model.module_layers, names=model.peft_names)
    assert excluded_yet_adapted("all-linear", ".*layers\\.100\\..*", model.peft_names, layers) == ()  # no such layer
    assert excluded_yet_adapted("all-linear", ".*\\.mlp\\.experts", model.peft_names, layers) == (
        "mlp.experts.gate_proj", "mlp.experts.up_proj", "mlp.experts.down_proj")  # the experts' module itself


def test_a_regexs_experts_are_counted_in_the_layers_it_excludes_too() -> None:
    # PEFT's short names (gate_proj, up_proj, down_proj, from layers 1-47) map to the fused parameters, which
    # _inject_parameters adapts in every layer: layer 0's too (47 layers counted before)
    def counted(pattern: str, excluded: str | None) -> int:
        model = CATALOG.with_lora_targets("Qwen3-30B-A3B", LoraTargets(pattern, excluded)).model("Qwen3-30B-A3B")
        return lora_parameters(model, 16, "fused")

    assert counted(".*\\.experts\\..*_proj", ".*layers\\.0\\..*") == counted(".*\\.experts\\..*_proj", None) == (
        16 * (2 * (1536 + 2048) + 2048 + 768) * 128 * 48)  # 981,467,136
    lora = {"lora_rank": 16, "target_modules": ".*\\.experts\\..*_proj", "exclude_modules": ".*layers\\.0\\..*"}
    problems = _lora_problems("Qwen3-30B-A3B", lora, "0.6")
    assert [code for code, _ in problems] == ["lora-excluded-adapted"]
    assert problems[0][1].startswith(
        "model.lora_configs[0].exclude_modules '.*layers\\.0\\..*' matches Qwen3-30B-A3B's routed experts "
        "(mlp.experts.gate_proj, mlp.experts.up_proj, mlp.experts.down_proj), but target_modules "
        "'.*\\.experts\\..*_proj' adapts them all the same, in every layer, on transformers 5 (Trinity 0.6's): ")
    assert problems[0][1].endswith(
        "(by the last names of what the regular expression matches in any layer), which exclude_modules does not "
        "leave out (_inject_parameters); rft-solver counts the adapter on them: give target_modules a regular "
        "expression that matches none of them in any layer")


def test_check_says_it_as_a_but_line_and_the_plans_count_the_experts(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "moe.yaml"
    config.write_text("model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 8192\n  lora_configs:\n"
                      "    - {lora_rank: 16, exclude_modules: '.*\\.mlp\\..*'}\n", encoding="utf-8")
    _, out, err = cli("--from-config", str(config), "--gpu", "h100", "--check", "--trinity-version", "0.6")
    said = EXCLUDED_ADAPTED.format(release="Trinity 0.6's")
    assert err == "" and f"but: {said}" in " ".join(out.split())
    # the adapter is counted on all of all-linear's modules, the router's and the experts' with them
    assert ("the verdict and the plans count LoRA rank 16's states (the frozen base's fp32 weights and the adapter's "
            "on every linear layer but the output projection, unless --lora-rank gives another)") in " ".join(
        out.split())


# (c) A config read alone assumes no model type where none takes its regex.

def test_a_regex_no_type_takes_is_said_so_by_the_config_read_alone() -> None:
    text = ("model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 16384\n"
            "  lora_configs: [{lora_rank: 16, target_modules: '.*\\.experts\\.gate_proj'}]\n")
    config = read_trinity_config(text, "t.yaml", {})
    # before: "(its target_modules '.*\\.experts\\.gate_proj' matches no module)", a dense Qwen3's, assumed
    assert config.lora_rank == 0
    assert ("the verdict and the plans count full fine-tuning's, as the tables measured (its target_modules "
            "'.*\\.experts\\.gate_proj' is taken on no model type's module names rft-solver holds: peft fails on it "
            "with each, and the checks on the model's names say why): a LoRA run needs less memory") in config.notes[1]
    # the checks, which know the model, say why: the routed experts' gate_proj without their up_proj
    refusal = peft_target_refusal(".*\\.experts\\.gate_proj", None, CATALOG.model("Qwen3-30B-A3B").peft_names)
    assert refusal is not None and refusal.startswith("matches the routed experts' gate_proj without their up_proj")


# (d) ' all-linear ': a regex to PEFT, which strips nothing.

SPACED = ("is all-linear with spaces around it, which peft takes as a regular expression (it lowers the word but "
          "strips nothing) and which matches no module")


def test_all_linear_with_spaces_is_refused_saying_why(cli: Cli) -> None:
    status, out, err = cli(*MEMORY, "--lora-targets", " all-linear ")
    assert (status, out, err) == (2, "", (f"solve memory: error: --lora-targets ' all-linear ' {SPACED}: give "
                                          "all-linear without the spaces\n"))
    with pytest.raises(solver.QueryError) as refused:
        solver.plan("Qwen3-8B", gpu="A100-80GB", budget_gpus=6, max_model_len=16384, lora_rank=64,
                    lora_targets=" ALL-linear ")
    assert str(refused.value) == f"lora_targets ' ALL-linear ' {SPACED}: give all-linear without the spaces"
    problem = lora_targets_problem(" all-linear ", None, CATALOG.model("Qwen3-30B-A3B"))
    assert problem is not None and problem.code is ConfigProblemCode.LORA_CONFIGS_REFUSED
    assert problem.words.startswith(f"model.lora_configs[0].target_modules ' all-linear ', on Qwen3-30B-A3B (a "
                                    f"mixture of experts), {SPACED}: peft matches it whole")
    assert lora_targets_problem("ALL-LINEAR", None, CATALOG.model("Qwen3-8B")) is None  # lowered: taken


# (e) A rope_scaling without rope_theta under Trinity 0.5: its 0.5.0 and 0.5.2 may run on transformers 5.

YARN = {"rope_type": "yarn", "factor": 1.6, "original_max_position_embeddings": 40960}
ON_05 = ("model.rope_scaling has no rope_theta: on transformers 5 (Trinity 0.5.0 allows it, 0.5.2 up to 5.3.0) "
         "Trinity 0.5's trainer sets it as Qwen3-8B's RoPE parameters, in which transformers finds no base, and fails "
         "as it builds the model unless model.rope_theta is set; on transformers 4, which Trinity 0.5.2's vllm extra "
         "installs (vLLM 0.17.0 to 0.19.0 require transformers below 5), it builds; add rope_theta: 1000000 to it (as "
         "solver.trinity.patch_trinity_config does; harmless on transformers 4)")


def _rope_problems(version: str | None, experts: str, **model: Any) -> list[tuple[str, str]]:
    mapping = {"model": {"model_path": "Qwen/Qwen3-8B", "max_model_len": 65536, "rope_scaling": YARN, **model},
               "explorer": {"rollout_model": {"engine_num": 2}}}
    problems = trinity_config_problems(mapping, CATALOG.model("8B"), 6, version=version,  # type: ignore[arg-type]
                                       experts=experts)  # type: ignore[arg-type]
    return [(problem.code.value, problem.words) for problem in problems if "rope" in problem.code.value]


def test_a_mapping_without_its_base_is_a_but_line_on_05_and_none_on_051() -> None:
    # before: no line on 0.5, whose docstring said its transformers 4 builds it
    assert _rope_problems("0.5", "either") == [("rope-theta-missing", ON_05)]
    # model.rope_theta mends it on the transformers 5 that 0.5.2 takes (persona62, s81: tests/test_persona62_s81.py)
    assert _rope_problems("0.5", "either", rope_theta=1000000) == []
    assert _rope_problems("0.5", "separate") == []  # 0.5.1: transformers 4 alone
    assert _rope_problems("0.5", "either", rope_scaling={**YARN, "rope_theta": 1000000}) == []


def test_check_under_05_says_it_and_not_under_051(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text("mode: both\nalgorithm: {algorithm_type: grpo}\nmodel:\n  model_path: Qwen/Qwen3-8B\n"
                      "  max_model_len: 65536\n  rope_scaling: {rope_type: yarn, factor: 1.6, "
                      "original_max_position_embeddings: 40960}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "explorer: {rollout_model: {engine_num: 4}}\n", encoding="utf-8")
    for version, codes in (("0.5", ["rope-theta-missing"]), ("0.5.0", ["rope-theta-missing"]),
                           ("0.5.2", ["rope-theta-missing"]), ("0.5.1", [])):
        _, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--json", "--trinity-version",
                        version)
        current = json.loads(out)[0]["current"]
        assert (version, current["refused"], current["config_problem_codes"]) == (version, False, codes)
    _, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--check", "--trinity-version", "0.5")
    assert f"but: {ON_05.replace('solver.trinity.patch_trinity_config', '--write')}" in " ".join(
        out.split())
