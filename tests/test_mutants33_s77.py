"""Mutation testing of release05a's merge (mutants33, session 77): what its survivors showed untested. Under a release
taking ``either`` a tie between the two adapters keeps transformers 5's (GraniteMoE's); the estimate's and the plan's
"a mixture of experts" phrase counts the LoRA adapter too; ``solve --from-config --trinity-version 0.5.1`` checks the
config's LoRA as 0.5.1 holds the experts; and a plan written for another release than it counted (`written_layout`:
the apply lines, the fragment, the patch and its check) says and counts what that release holds."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from test_release05a_s77 import SCOUT, SMALL, WHOLE_OF_TWO

import solver
from solver.memory import adapter_experts, expert_layout_words, lora_parameters, shown_host_need
from solver.render.summary import apply_lines
from solver.tables import load_catalog
from solver.trinity import check_trinity_config, patch_trinity_config, trinity_config_problems, trinity_fragment
from solver.trinity.patch import patched_config_problems, patched_trinity_config

Cli = Callable[..., tuple[int, str, str]]

QWEN15_MOE_CONFIG = Path(__file__).parent / "data" / "hf-configs" / "Qwen1.5-MoE-A2.7B.json"
QWEN3_30B_A3B = load_catalog().model("Qwen3-30B-A3B")
CODE = "lora-moe-config-unsaved"
UNSAVED = "PEFT makes the adapter's target_parameters a set"
ADAPTER_PHRASE = (f"a mixture of experts (calibrated on dense models; {WHOLE_OF_TWO}; its LoRA adapter as "
                  "transformers 4 makes them, the larger)")
LORA_CONFIG = "model:\n  model_path: Qwen/Qwen3-30B-A3B\n  lora_configs: [{lora_rank: 64}]\n"


def _read(folder: Path, config: dict[str, object]) -> solver.Model:
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return solver.load_model_config(folder)


def _separate_plan() -> solver.Plan:
    """Qwen3-30B-A3B with LoRA rank 64 on 8 H100s, planned for Trinity 0.5.1 (its routed experts separate)."""
    (answer,) = solver.plan("30B-A3B", gpu="h100", budget_gpus=8, max_model_len=32768, lora_rank=64,
                            trinity_version="0.5.1")
    assert answer.best is not None and answer.best.expert_layout == "separate"
    return answer.best


@pytest.mark.parametrize("config", [{**SMALL, "model_type": "granitemoe"}, SCOUT])
def test_a_tie_between_the_adapters_keeps_the_fused_one(tmp_path: Path, config: dict[str, object]) -> None:
    # GraniteMoE's and Llama 4's experts are 3-D parameters in transformers 4.57.1 too: neither layout adapts them, so
    # the two adapters are alike (GraniteMoE's 30,752 a rank) and `either` says no adapter of transformers 4's.
    model = _read(tmp_path, config)
    assert lora_parameters(model, 16, "fused") == lora_parameters(model, 16, "separate")
    assert adapter_experts(model, "either") == "fused"
    assert expert_layout_words(model, "either", 16) == (  # 3-D in both: no larger of two layouts to name
        "routed experts counted 3-D, as transformers 4 and 5 hold them and Trinity 0.5's verl 0.7 places them")
    if config["model_type"] == "granitemoe":
        assert lora_parameters(model, 16, "either") == 16 * 30_752 == 492_032


def test_the_estimates_mixture_phrase_counts_the_lora_adapter() -> None:
    model = solver.load_model_config(QWEN15_MOE_CONFIG)
    catalog = load_catalog().with_model(model)
    estimate = solver.estimate_memory(model.name, "h100", 8, 8192, sp=1, lora_rank=32, trinity_version="0.5",
                                      catalog=catalog)
    assert [words for words in estimate.beyond_calibration if "mixture" in words] == [ADAPTER_PHRASE]


def test_solve_says_the_adapter_it_counted_beside_the_experts(cli: Cli) -> None:
    status, out, err = cli("--model-config", str(QWEN15_MOE_CONFIG), "--gpu", "h100", "--gpus", "8", "--exact",
                           "--len", "8k", "--lora-rank", "32", "--trinity-version", "0.5", "--json")
    assert status == 0, err
    beyond = json.loads(out)[0]["plans"][0]["beyond_calibration"]
    assert [words for words in beyond if "mixture" in words] == [ADAPTER_PHRASE]


@pytest.mark.parametrize(("release", "said"), [("0.5.1", False), ("0.5.2", True)])
def test_from_config_checks_the_configs_lora_as_the_release_holds_the_experts(cli: Cli, tmp_path: Path, release: str,
                                                                              said: bool) -> None:
    config = tmp_path / "trinity.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "model:\n  model_path: Qwen/Qwen3-30B-A3B\n  max_model_len: 8192\n"
                      "  lora_configs: [{lora_rank: 16}]\n"
                      "explorer:\n  rollout_model:\n    engine_num: 2\n    tensor_parallel_size: 1\n", encoding="utf-8")
    status, out, err = cli("--from-config", str(config), "--gpu", "h100", "--trinity-version", release, "--json")
    assert (status, err) == (0, "")
    assert (CODE in json.loads(out)[0]["current"]["config_problem_codes"]) is said


@pytest.mark.parametrize(("version", "said"), [("0.5", False), ("0.6", True), (None, True)])
def test_the_apply_lines_say_the_unsaved_config_as_the_written_release_holds_the_experts(version: str | None,
                                                                                         said: bool) -> None:
    # 0.5.1's plan written for 0.5 keeps its separate experts (counted_release: 0.5.1); for 0.6 or none, transformers 5
    lines = apply_lines(_separate_plan(), QWEN3_30B_A3B, version)  # type: ignore[arg-type]
    comment = lines[lines.index("model.lora_configs: [{lora_rank: 64}]") - 1]
    assert comment.startswith("# a new adapter on all-linear (Trinity's default target_modules), as planned;")
    assert (UNSAVED in comment) is said


@pytest.mark.parametrize(("version", "said"), [("0.5", False), ("0.6", True)])
def test_the_fragments_lora_comment_follows_the_written_release(version: str, said: bool) -> None:
    fragment = trinity_fragment(_separate_plan(), QWEN3_30B_A3B, version=version)  # type: ignore[arg-type]
    assert "  lora_configs: [{lora_rank: 64}]\n" in fragment
    assert (UNSAVED in " ".join(fragment.replace("#", "").split())) is said


# None: the plan's own release, 0.5.1 (versionnone, s79; 0.6's before)
@pytest.mark.parametrize(("version", "codes"), [("0.5", []), ("0.6", [f"{CODE}-refused"]), (None, [])])
def test_the_patch_checks_the_lora_config_as_the_written_release_holds_the_experts(version: str | None,
                                                                                   codes: list[str]) -> None:
    plan = _separate_plan()
    patched = patched_trinity_config(LORA_CONFIG, plan, QWEN3_30B_A3B, version=version)  # type: ignore[arg-type]
    problems = patched_config_problems(LORA_CONFIG, patched, plan, QWEN3_30B_A3B,
                                       version=version)  # type: ignore[arg-type]
    assert [problem.code for problem in problems] == codes


def test_a_0_5_1_plan_patched_for_0_6_counts_whole_experts_on_the_host() -> None:
    # Qwen3-30B-A3B with Offload on 6 H100s: 517.3 GiB per node with 0.5.1's separate experts (test_review77b_s77);
    # under 0.6 whole experts and the reference model's fp32 shards: 899.0 (0.6 with FSDP2 on an H100, compute
    # capability 9, loads the model on rank 0 alone, less than training holds).
    answer = solver.plan("Qwen3-30B-A3B", gpu="h100", budget_gpus=6, max_model_len=8192, exact=True, offload=True,
                         host_ram_gb=700.0, trinity_version="0.5.1")[0]
    assert answer.best is not None and answer.best.host_memory_gb == 517.3
    assert round(shown_host_need(QWEN3_30B_A3B, 6, 6, True, "0.6", True, 0, None, "fused", "rank-0"), 1) == 899.0
    patched = patch_trinity_config("model:\n  model_path: Qwen/Qwen3-30B-A3B\n", answer.best, QWEN3_30B_A3B,
                                   version="0.6")
    assert "  # host memory: 899.0 GiB per node for Offload; not checked: host_ram_gb not given\n" in patched


def test_the_checks_without_experts_take_the_release_as_transformers_5_may_run_it() -> None:
    # The API's default (`experts="fused"`): 0.5 named alone may run transformers 5, so the caution stays.
    config = {"model": {"lora_configs": [{"lora_rank": 32}]}}
    said = [problem.words for problem in trinity_config_problems(config, QWEN3_30B_A3B, 8, version="0.5")
            if problem.code == CODE]
    assert len(said) == 1 and "makes the adapter's target_parameters a set for the routed experts" in said[0]
    assert [words for words in check_trinity_config(config, QWEN3_30B_A3B, 8, version="0.5")
            if "target_parameters a set" in words] == said
