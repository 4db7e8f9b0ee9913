"""Session 81, excludecaution: ``lora-excluded-adapted`` said of a plan's own exclusion too, not only of a config's.
On a mixture of experts whose LoRA config PEFT converts (transformers 5: Trinity 0.6, 0.5.0, 0.5.2), peft 0.21.2
adapts the router and the routed experts as ``target_parameters`` whatever ``exclude_modules`` says, so
``--lora-exclude '.*\\.mlp\\..*'`` on Qwen3-30B-A3B still adapts them (and the plans count them so): before, ``solve``,
``solve memory``, ``solve map``, a cluster job's ``lora_exclude_modules`` and the API's ``lora_exclude_modules=``
planned with no word of it. Now a plan caution of the config check's code, in its words
(`solver.rules.excluded_adapted_words`), naming the option; none under 0.5.1's separate experts, on a dense model, or
where the exclusion leaves the experts out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import solver
from solver.results import CautionCode

Cli = Callable[..., tuple[int, str, str]]
MOE_MLP = ".*\\.mlp\\..*"
PLAN = ("--model", "Qwen3-30B-A3B", "--gpu", "h100", "--len", "16384", "--lora-rank", "16")
ALL_RELEASES = "Trinity 0.6's, and 0.5.0's and 0.5.2's where they run on it"
WORDS = (
    "exclude_modules '{excluded}' ({option}) matches Qwen3-30B-A3B's router (mlp.gate) and routed experts "
    "(mlp.experts.gate_proj, mlp.experts.up_proj, mlp.experts.down_proj), but target_modules 'all-linear' adapts them "
    "all the same, in every layer, on transformers 5 ({release}): peft 0.21.2 converts a mixture of experts' LoRA "
    "config and adapts the router and the routed experts as target_parameters (all-linear adds them by name, whatever "
    "exclude_modules says), which exclude_modules does not leave out (_inject_parameters); rft-solver counts the "
    "adapter on them: {fix}")
OTHERS = "give {targets} {regex}, which adapts the other modules alone"
OTHERS_REGEX = ".*\\.(q_proj|k_proj|v_proj|o_proj)"
NONE_OF_THEM = "give {targets} a regular expression that matches none of them in any layer"
UNSAVED = "lora-moe-config-unsaved"


def words(excluded: str = MOE_MLP, release: str = ALL_RELEASES, fix: str = OTHERS, keywords: bool = False,
          job: bool = False) -> str:
    """The caution's words on `excluded`, named as the command's options (or the API's `keywords`, or a cluster
    `job`'s keys: smallslips40's `OptionNames.lora_keys`) name them."""
    option, targets = ("lora_exclude_modules", "lora_targets") if keywords else ("--lora-exclude", "--lora-targets")
    if job:
        option, targets = "the job's lora_exclude_modules", "the job's lora_targets"
    regex = f"'{OTHERS_REGEX}'" if targets.startswith("--") else OTHERS_REGEX  # quoted for a shell (loraexclude2)
    return WORDS.format(excluded=excluded, option=option, release=release, fix=fix.format(targets=targets,
                                                                                          regex=regex))


def flat(text: str) -> str:
    """`text` with its wrapping undone (each run of whitespace one space)."""
    return " ".join(text.split())


def first_plan(out: str) -> dict[str, Any]:
    plan: dict[str, Any] = json.loads(out)[0]["plans"][0]
    return plan


def test_solve_text_and_json_caution_the_mlp_exclusion(cli: Cli) -> None:
    status, out, err = cli(*PLAN, "--lora-exclude", MOE_MLP)
    assert (status, err) == (0, "")
    assert f"caution {words()} caution LoRA on Qwen3-30B-A3B, a mixture of experts:" in flat(out)
    status, out, _ = cli(*PLAN, "--lora-exclude", MOE_MLP, "--json")
    plan = first_plan(out)
    assert (status, plan["caution_codes"]) == (0, ["lora-excluded-adapted", UNSAVED])
    assert plan["cautions"][0] == words()
    assert (plan["lora_target_modules"], plan["lora_exclude_modules"]) == ("all-linear", MOE_MLP)


def test_the_fragment_header_says_it_once(cli: Cli) -> None:
    status, out, _ = cli(*PLAN, "--lora-exclude", MOE_MLP, "--emit", "trinity")
    header = flat(" ".join(line.lstrip("#") for line in out.splitlines() if line.startswith("#")))
    assert status == 0
    assert header.count("(--lora-exclude) matches Qwen3-30B-A3B's router") == 1
    assert f"caution: {words()}" in header


def test_an_exclusion_of_everything_says_to_match_none_of_them(cli: Cli) -> None:
    # all-linear adds the router and the experts by name: '.*' leaves them in, and no regex of the others is left
    status, out, _ = cli(*PLAN, "--lora-exclude", ".*", "--json")
    plan = first_plan(out)
    assert (status, plan["caution_codes"]) == (0, ["lora-excluded-adapted", UNSAVED])
    assert plan["cautions"][0] == words(".*", fix=NONE_OF_THEM)


@pytest.mark.parametrize(("release", "codes", "said"), [
    ("0.6", ["lora-excluded-adapted", UNSAVED], "Trinity 0.6's"),
    ("0.5", ["lora-excluded-adapted", UNSAVED], "Trinity 0.5.0's and 0.5.2's, where they run on it"),
    ("0.5.1", [], None)])  # transformers 4: PEFT converts nothing, and excludes the separate experts
def test_the_release_words_it_or_leaves_it_out(cli: Cli, release: str, codes: list[str], said: str | None) -> None:
    status, out, _ = cli(*PLAN, "--lora-exclude", MOE_MLP, "--trinity-version", release, "--json")
    plan = first_plan(out)
    assert (status, plan["caution_codes"]) == (0, codes)
    if said is not None:
        assert plan["cautions"][0] == words(release=said)


@pytest.mark.parametrize("given", [
    ("--model", "Qwen3-8B", "--lora-exclude", MOE_MLP),  # a dense model's MLP: nn.Linear modules, excluded
    ("--model", "Qwen3-30B-A3B", "--lora-exclude", ".*\\.q_proj"),  # matches neither router nor experts
    ("--model", "Qwen3-30B-A3B", "--lora-targets", "q_proj,v_proj", "--lora-exclude", MOE_MLP)])  # none targeted
def test_no_caution_where_the_exclusion_does_what_it_says(cli: Cli, given: tuple[str, ...]) -> None:
    status, out, _ = cli(*given, "--gpu", "h100", "--len", "16384", "--lora-rank", "16", "--json")
    assert status == 0
    assert "lora-excluded-adapted" not in first_plan(out)["caution_codes"]


def test_a_regexs_experts_excluded_from_one_layer(cli: Cli) -> None:
    status, out, _ = cli(*PLAN, "--lora-targets", ".*\\.experts\\..*_proj", "--lora-exclude", ".*layers\\.0\\..*",
                         "--json")
    caution = first_plan(out)["cautions"][0]
    assert status == 0
    assert caution == (
        "exclude_modules '.*layers\\.0\\..*' (--lora-exclude) matches Qwen3-30B-A3B's routed experts "
        "(mlp.experts.gate_proj, mlp.experts.up_proj, mlp.experts.down_proj), but target_modules "
        "'.*\\.experts\\..*_proj' adapts them all the same, in every layer, on transformers 5 (" + ALL_RELEASES + "): "
        "peft 0.21.2 converts a mixture of experts' LoRA config and adapts the router and the routed experts as "
        "target_parameters (by the last names of what the regular expression matches in any layer), which "
        "exclude_modules does not leave out (_inject_parameters); rft-solver counts the adapter on them: give "
        "--lora-targets a regular expression that matches none of them in any layer")


def test_solve_memory_cautions_it(cli: Cli) -> None:
    given = ("memory", "--model", "Qwen3-30B-A3B", "--gpu", "h100", "--gpus", "8", "--len", "16384", "--env",
             "--lora-rank", "16", "--lora-exclude", MOE_MLP)
    status, out, _ = cli(*given)
    assert status == 0
    assert f"caution: {words()} caution: LoRA on Qwen3-30B-A3B" in flat(out)
    status, out, _ = cli(*given, "--json")
    estimate = json.loads(out)
    assert (status, estimate["caution_codes"], estimate["cautions"][0]) == (
        0, ["lora-excluded-adapted", UNSAVED], words())
    # the adapter counted on the router and the experts: all-linear less the MLP is all-linear less nothing
    status, out, _ = cli(*given[:-2], "--json")
    assert (status, estimate["lora_parameters"], json.loads(out)["lora_parameters"]) == (0, 996_507_648, 996_507_648)


def test_solve_map_says_it_under_the_legend_and_in_its_json(cli: Cli) -> None:
    given = ("map", "--gpu", "h100", "--model", "Qwen3-30B-A3B", "--budgets", "8", "--lora-rank", "16",
             "--lora-exclude", MOE_MLP, "--time-limit", "20")
    status, out, _ = cli(*given)
    assert status == 0
    assert flat(out).count("(--lora-exclude) matches Qwen3-30B-A3B's router") == 1
    assert f"caution: {words()} caution: LoRA on Qwen3-30B-A3B" in flat(out)
    status, out, _ = cli(*given, "--json")
    plans = [plan for row in json.loads(out)[0]["rows"] for plan in row["plans"] if plan is not None]
    assert status == 0 and plans
    assert all(plan["cautions"][plan["caution_codes"].index("lora-excluded-adapted")] == words() for plan in plans)


def test_a_cluster_jobs_exclusion_is_cautioned(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: h100, gpu: H100-80GB, gpus_per_node: 8, nodes: 1}\njobs:\n"
                    "  - {name: moe, model: Qwen3-30B-A3B, max_model_len: 16384, lora_rank: 16, "
                    "lora_exclude_modules: '.*\\.mlp\\..*'}\n")
    status, out, _ = cli("cluster", str(path), "--time-limit", "10")
    assert status == 0
    assert f"caution: moe: {words(job=True)} caution: moe: LoRA on Qwen3-30B-A3B" in flat(out)
    status, out, _ = cli("cluster", str(path), "--time-limit", "10", "--json")
    plan = json.loads(out)["placements"][0]["plan"]
    assert (status, plan["caution_codes"], plan["cautions"][0]) == (0, ["lora-excluded-adapted", UNSAVED],
                                                                    words(job=True))


def test_the_api_names_its_keywords() -> None:
    answer = solver.plan("Qwen3-30B-A3B", gpu="h100", max_model_len=16384, lora_rank=16, lora_exclude_modules=MOE_MLP)
    plan = answer[0].plans[0]
    assert plan.caution_codes == (CautionCode.LORA_EXCLUDED_ADAPTED, CautionCode.LORA_MOE_CONFIG_UNSAVED)
    assert plan.cautions[0] == words(keywords=True)
    estimate = solver.estimate_memory(model="Qwen3-30B-A3B", gpu="h100", gpus=8, max_model_len=16384, env=True,
                                      lora_rank=16, lora_exclude_modules=MOE_MLP, trinity_version="0.5.1")
    assert CautionCode.LORA_EXCLUDED_ADAPTED not in estimate.caution_codes
    estimate = solver.estimate_memory(model="Qwen3-30B-A3B", gpu="h100", gpus=8, max_model_len=16384, env=True,
                                      lora_rank=16, lora_exclude_modules=MOE_MLP)
    assert (estimate.caution_codes[0], estimate.cautions[0]) == (
        CautionCode.LORA_EXCLUDED_ADAPTED, words(keywords=True))


def test_a_configs_own_exclusion_is_its_checks_to_say_not_the_plans_too(cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "moe.yaml"
    config.write_text("algorithm: {algorithm_type: grpo}\ncluster: {node_num: 1, gpu_per_node: 8}\n"
                      "buffer: {batch_size: 16, train_batch_size: 48}\nmodel:\n  model_path: Qwen/Qwen3-30B-A3B\n"
                      "  max_model_len: 8192\n  lora_configs: [{lora_rank: 16, target_modules: all-linear, "
                      "exclude_modules: '.*\\.mlp\\..*'}]\n"
                      "explorer:\n  rollout_model: {engine_num: 2, tensor_parallel_size: 1}\n")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json")
    answer = json.loads(out)[0]
    assert status == 0
    assert "lora-excluded-adapted" in answer["current"]["config_problem_codes"]
    assert answer["plans"][0]["caution_codes"] == [UNSAVED]
