"""Tests that kill the mutants of session 76's changes that its own tests left alive (helper mutants28): the greedy
placement that stands under --current, ..."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_api import place
from command_words import make_query
from reference import enumerate_plans, ranked_alternatives
from test_clusterlimits_s76 import (
    A100_8,
    A100_WIDE,
    CATALOG,
    SHARERS,
    _fleet,
    _late,
    planner_solve_limits,  # noqa: F401 (a fixture)
)
from test_dpomicro_s76 import example_with_algorithm
from test_greedyrunning_s76 import GREEDY, _fallback, _no_first_placement, _where, _written, running_now
from test_lorarest4_s76 import DENSE_NAMES
from test_lorarest4_s76 import _config as _lora_config
from test_moecost_s61 import DEEPSEEK_V2_LITE_LIKE
from test_padbound_s71 import INTERNLM2
from test_persona43_s76 import GRPO_14B
from test_runningfirst_s75 import JOBS, POOL

import solver
import solver.clock
import solver.cluster.search
from solver.cluster.greedy import greedy
from solver.cluster.options import Planner
from solver.memory import adapted_shapes
from solver.solve import plan as solve_plan
from solver.tables import load_catalog, load_fleet, load_weights
from solver.tables.peft_match import QWEN3_MOE, peft_target_refusal
from solver.trinity import read_trinity_config
from solver.trinity.checks import lora_targets_problem

Cli = Callable[..., tuple[int, str, str]]


def _pool_fleet(tmp_path: Path, nodes: int, jobs: list[dict[str, object]]) -> Path:
    """A fleet of pool a100 (`POOL`) with `nodes` nodes of 8 GPUs, and `jobs`."""
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump({"pools": [{**POOL, "nodes": nodes}], "jobs": jobs}), encoding="utf-8")
    return path


def test_the_required_jobs_rerun_keeps_the_running_jobs_where_they_still_fit(cli: Cli, tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch):
    # A running job on each of the 3 nodes leaves the required job (8 GPUs of a node) nowhere; placed first, it takes
    # node 0, and runs, on node 0, moves to node 1, the first with room; also (node 2) and more (node 1, beside runs)
    # are kept where they run, though node 1 is the first with room for them too.
    now = _written(tmp_path, [("runs", 0, [0, 1, 2], 1, 2, 16384, True), ("also", 2, [0, 1], 1, 1, 8192, False),
                              ("more", 1, [0, 1], 1, 1, 8192, False)])
    must = {"name": "must", "model": "Qwen3-14B", "max_model_len": "32k", "rollout_gpus": 6, "required": True}
    more = {**JOBS[2], "name": "more"}
    _no_first_placement(monkeypatch)
    status, err, lines, answer = _fallback(cli, _pool_fleet(tmp_path, 3, [must, *JOBS[1:], more]), now, "--no-widen")
    assert (status, err, lines[0], running_now(lines)) == (0, "", GREEDY,
                                                           "running now: 2 stay, 1 moves, 0 stop; 1 starts")
    assert _where(answer) == [("must", [0], list(range(8)), 2, 6, "starts"), ("runs", [1], [2, 3, 4], 1, 2, "moves"),
                              ("also", [2], [0, 1], 1, 1, "stays"), ("more", [1], [0, 1], 1, 1, "stays")]


def test_running_jobs_are_kept_before_a_required_job_where_every_required_job_is_placed(
        cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # runs, on node 0 on 2 trainer GPUs (not its smallest way), is kept there first; the required job (6 GPUs of a
    # node) then takes node 1. Placed first, it would take node 0 and leave runs its smallest way on node 1.
    now = _written(tmp_path, [("runs", 0, [0, 1, 2, 3], 2, 2, 16384, False)])
    must = {"name": "must", "model": "Qwen3-14B", "max_model_len": "32k", "rollout_gpus": 4, "required": True}
    _no_first_placement(monkeypatch)
    status, err, lines, answer = _fallback(cli, _pool_fleet(tmp_path, 2, [must, JOBS[1]]), now, "--no-widen")
    assert (status, err, lines[0], running_now(lines)) == (0, "", GREEDY.replace("(of 4): 4", "(of 2): 2"),
                                                           "running now: 1 stays, 0 move, 0 stop; 1 starts")
    assert _where(answer) == [("must", [1], list(range(6)), 2, 4, "starts"),
                              ("runs", [0], [0, 1, 2, 3], 2, 2, "stays")]


def test_past_the_time_limit_another_pool_is_weighed_against_the_kept_way_alone(cli: Cli, tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):
    # a, kept beside 4 idle GPUs where b left, its wider ways unasked: pool a100-b's 6 GPUs (cost 0.1667) run it for
    # less than its own way (0.25), though not than the 8 GPUs (0.125) widening would grow it to, which no one asked.
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump({"pools": [A100_8], "jobs": SHARERS}), encoding="utf-8")
    running = tmp_path / "running.json"
    running.write_text(cli("cluster", str(both), "--json")[1], encoding="utf-8")
    alone = tmp_path / "alone.yaml"
    alone.write_text(yaml.safe_dump({"pools": [A100_8, {**A100_8, "name": "a100-b"}], "jobs": SHARERS[:1]}),
                     encoding="utf-8")
    now = [-math.inf]
    with_current = solver.cluster.search.with_current

    def late(*args: Any, **kwargs: Any) -> Any:
        now[0] = math.inf
        return with_current(*args, **kwargs)

    monkeypatch.setattr(solver.cluster.search, "with_current", late)
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - now[0])
    status, out, _ = cli("cluster", str(alone), "--current", str(running), "--json")
    answer = json.loads(out)
    assert status == 0
    kept = ("its trainer GPU count is kept as it runs (4 trainer GPUs); the time limit ran out before the wider ways "
            "the 4 idle GPUs beside it on its node would give it were weighed (raise --time-limit); kept in pool a100, "
            "where it runs, though pool a100-b's idle room would run it for less (6 trainer GPUs, vanilla, cost "
            "0.1667, not 0.25)")
    assert [(placed["pool"], placed["stay_reason_code"], placed["stay_reason"]) for placed in answer["placements"]] == [
        ("a100", "count-kept", kept)]
    # ... and solve's best on its trainer GPUs after them, asked last (s82): past the deadline too, left unasked.
    assert (answer["wall_clock_stopped"], answer["solve_best_unasked"]) == (["stay notes", "solve best"], 1)
    now[0] = -math.inf
    status, text, _ = cli("cluster", str(alone), "--current", str(running))
    assert status == 0
    assert ("the wall clock stopped weighing the wider ways of the running jobs kept beside idle GPUs and asking "
            "solve's best on the trainer GPUs of the jobs placed on the tables' plans before the work they are given "
            "(a busy machine, or the jobs' ways took much of the time limit): another run may give another answer "
            "(raise --time-limit)") in " ".join(text.split())


def test_a_dpo_config_of_a_model_with_remove_padding_on_counts_no_pair(cli: Cli, tmp_path: Path):
    # Qwen3-8B trains with remove padding on: its token budget bounds a pair as any sequences, so no pair is counted
    # and the answer says none (dpo_pairs left out), as for GRPO.
    answers = {}
    for algorithm in ("grpo", "dpo"):
        given = example_with_algorithm(tmp_path, algorithm)
        status, out, err = cli("--from-config", str(given), "--gpu", "h100", "--json")
        (answer,) = json.loads(out)
        answers[algorithm] = (status, err, answer["model"], "dpo_pairs" in answer, answer["plans"][0]["memory_gb"])
    assert answers["grpo"] == answers["dpo"] == (0, "", "Qwen3-8B", False, 69.67)


def test_a_runs_deadline_ends_with_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           planner_solve_limits: list[float]):  # noqa: F811
    _late(monkeypatch, solver.cluster.search, "_place", 0.25)
    place(load_fleet(_fleet(tmp_path, "fleet", [A100_WIDE]), CATALOG), catalog=CATALOG, time_limit_s=10.0)
    assert planner_solve_limits and set(planner_solve_limits) == {0.25}
    planner_solve_limits.clear()
    job = load_fleet(_fleet(tmp_path, "fleet", [A100_WIDE]), CATALOG).jobs[0]
    planner = Planner(CATALOG, load_weights(), "auto", time_limit_s=10.0)
    assert planner.best("A100-80GB", job.model, 2, 16384, 8, "auto", None, None, job.training) is not None
    assert set(planner_solve_limits) == {10.0}


@pytest.mark.parametrize(("critic", "ranked"), [
    ("resident", [(4, True, True, 4, 0.98475), (8, True, True, 2, 0.416625)]),
    ("offloaded", [(2, True, True, 2, 2.222), (4, True, True, 2, 1.111), (6, True, True, 2, 0.7406666666666667),
                   (8, True, False, 4, 0.492375)])])
def test_the_fewest_gpus_ranked_plans_with_a_critic_match_the_brute_force(critic: str,
                                                                          ranked: list[tuple[object, ...]]):
    # min_gpus with top > 1 ranks by a cost column of its own (`_ranks_apart`), which counts the critic too.
    query = {"gpu": "H100-80GB", "model": "Qwen3-14B", "objective": "min_gpus", "budget_gpus": 8,
             "max_model_len": 32768, "critic": critic}
    (answer,) = solve_plan(make_query(CATALOG, top=5, **query), CATALOG)
    got = [plan.model_dump(mode="json") for plan in answer.plans]
    every = enumerate_plans(CATALOG, estimates=True, **query)
    assert got == ranked_alternatives(every, CATALOG.model("Qwen3-14B"), CATALOG.gpu("H100-80GB"))[:5]
    assert [(plan["gpus"], plan["env"], plan["offload"], plan["sp"], plan["cost"]) for plan in got] == ranked


def test_no_count_within_the_budget_with_room_for_a_configs_rollout_names_its_explorer(cli: Cli, tmp_path: Path):
    # --gpus 7 (not exact) beside the config's 8 rollout GPUs on nodes of 8: no count leaves them a layout.
    config = tmp_path / "grpo.yaml"
    config.write_text(GRPO_14B)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--gpus", "7")
    assert status == 1
    assert ("no plan for 7 or fewer trainer GPUs with Qwen3-14B on H20-96GB: none of them leaves the 8 rollout GPUs "
            "(the config's explorer) room on nodes of 8, in the trainer's node") in " ".join(out.split())


def test_the_longest_length_of_a_padded_models_dpo_config_lies_on_the_grid(cli: Cli, tmp_path: Path):
    # InternLM2-7B has no tables: where the estimates without the pair (longer) were taken as the uncapped ones, every
    # cell read as stopped by a table, and the longest length left the grid (40358).
    given = example_with_algorithm(tmp_path, "dpo")
    status, out, err = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100",
                           "--maximize", "len", "--json")
    (answer,) = json.loads(out)
    assert (status, err) == (0, "")
    assert [(plan["gpus"], plan["env"], plan["offload"], plan["sp"], plan["max_model_len"])
            for plan in answer["plans"]] == [(6, True, True, 1, 39936)]  # 39 x 1024: no table stops a pair's estimate


def test_lora_counts_the_routed_experts_of_the_expert_layers_alone(tmp_path: Path):
    # DeepSeek-V2-Lite-like (test_moecost_s61's): 27 layers, the first dense; 64 routed experts of width 1408 in each
    # of the other 26, each adapted as its fused gate and up projection twice (once under each of its v4 names, since
    # session 79 one entry per module name) and its down projection once.
    config = DEEPSEEK_V2_LITE_LIKE
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    shapes = adapted_shapes(solver.load_model_config(tmp_path))
    assert shapes[-3:] == ((2 * 1408, 2048, 64 * 26), (2 * 1408, 2048, 64 * 26), (2048, 1408, 64 * 26))


def test_rollout_gpus_given_beside_a_config_are_named_as_the_option(cli: Cli, tmp_path: Path):
    config = tmp_path / "grpo.yaml"
    config.write_text(GRPO_14B)
    # the rollout GPUs are the command line's here (the same 8 as the config's explorer's), named as its option
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--gpus", "7", "--rollout-gpus", "8")
    assert status == 1
    assert ("no plan for 7 or fewer trainer GPUs with Qwen3-14B on H20-96GB: none of them leaves the 8 rollout GPUs "
            "(--rollout-gpus) room on nodes of 8") in " ".join(out.split())


def test_a_padded_models_dpo_plan_summary_says_the_pair_is_counted(cli: Cli, tmp_path: Path):
    given = example_with_algorithm(tmp_path, "dpo")
    status, out, _ = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100")
    assert status == 0
    assert ("token budget none read: one DPO pair per micro-batch (dynamic batch sizes off), so the estimate counts "
            "the DPO pair, a chosen and a rejected sequence, 2 x max_model_len = 65536 tokens per GPU cost"
            ) in " ".join(out.split())


def test_the_greedy_baseline_places_the_higher_priority_first(tmp_path: Path):
    # Each job takes a whole node of 8 (2 trainer GPUs beside 6 rollout): the one node runs the job of priority 5,
    # though the file lists the job of priority 1 first.
    jobs = [{"name": name, "model": "Qwen3-14B", "max_model_len": "32k", "rollout_gpus": 6, "priority": priority}
            for name, priority in (("low", 1), ("high", 5))]
    result = greedy(load_fleet(_pool_fleet(tmp_path, 1, jobs), CATALOG), CATALOG)
    assert ([placed.job for placed in result.placements], [left.job for left in result.unplaced]) == (
        ["high"], ["low"])


def test_trinity_05_writes_dpos_size_1_without_the_verl_lines_note(cli: Cli, tmp_path: Path):
    given = example_with_algorithm(tmp_path, "dpo")
    common = ("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--trinity-version",
              "0.5")
    status, out, err = cli(*common, "--emit", "trinity")
    actor = yaml.safe_load(out)["trainer"]["trainer_config"]["actor_rollout_ref"]["actor"]
    assert (status, actor["ppo_micro_batch_size_per_gpu"], "trains DPO" in err, "verl" in err) == (0, 1, False, False)


def _lora_refused(cli: Cli, tmp_path: Path, lora: str) -> tuple[object, ...]:
    """test_lorarest4_s76's Qwen3-8B config with `lora` (a LoRA config's keys): the exit status and the config's
    ``lora-configs-refused`` lines."""
    config = tmp_path / "trinity.yaml"
    config.write_text(_lora_config(f"  lora_configs: [{{{lora}}}]\n"), encoding="utf-8")
    status, out, _ = cli("--from-config", str(config), "--gpu", "h100", "--json")
    [answer] = json.loads(out)
    current = answer["current"]
    return status, [words for words, code in zip(current["config_problems"], current["config_problem_codes"],
                                                 strict=True) if code == "lora-configs-refused"]


def test_a_regex_whose_exclusion_leaves_a_dense_model_nothing_is_refused_there(cli: Cli, tmp_path: Path):
    # q_proj excluded, mlp.gate a mixture of experts' router alone: nothing on Qwen3-8B, which PEFT refuses; the
    # exclusion named, as what leaves nothing on the model's names (peftgap_s77: the target was named).
    status, refused = _lora_refused(cli, tmp_path, "lora_rank: 16, target_modules: '.*(mlp\\.gate|q_proj)', "
                                                   "exclude_modules: '.*q_proj'")
    assert (status, refused) == (0, [(
        "model.lora_configs[0].exclude_modules '.*q_proj', on Qwen3-8B (a dense model), leaves out every module "
        "target_modules '.*(mlp\\.gate|q_proj)' matches (\"No modules were targeted for adaptation\"): peft matches it "
        f"whole (re.fullmatch) against each module's full name ({DENSE_NAMES}), and Trinity fails as it makes the "
        "adapter: exclude fewer, or remove it")])


def test_a_rank_0_lora_config_makes_no_adapter_so_its_regex_is_not_refused(cli: Cli, tmp_path: Path):
    # refused for its rank alone (its own line), not for a regex that matches no module of Qwen3-8B
    status, refused = _lora_refused(cli, tmp_path, "lora_rank: 0, target_modules: '.*mlp\\.gate'")
    assert (status, len(refused), refused[0].startswith("model.lora_configs[0].lora_rank 0 without a path")) == (
        0, 1, True)


def test_a_lora_config_that_loads_an_adapter_is_not_refused_for_its_regex(cli: Cli, tmp_path: Path):
    # its target modules are the adapter's own file's (a dense model's, whatever the config says)
    status, refused = _lora_refused(cli, tmp_path, "lora_rank: 16, path: /adapters/a, target_modules: '.*mlp\\.gate'")
    assert (status, refused) == (0, [])


def test_a_dpo_config_of_a_model_with_remove_padding_on_gets_its_pair_off_dynamic_batch_sizes(cli: Cli,
                                                                                              tmp_path: Path):
    given = example_with_algorithm(tmp_path, "dpo")
    status, out, err = cli("--from-config", str(given), "--gpu", "h100", "--emit", "trinity")
    trainer = yaml.safe_load(out)["trainer"]
    # remove padding on: before (roles87) dynamic batch sizes stayed on, which split DPO's pairs (dpo-pair-dynamic),
    # and no micro-batch size was written; now they are off, with the actor's one pair, and the note says why
    assert (status, trainer["use_dynamic_bsz"], trainer["trainer_config"]["actor_rollout_ref"]["actor"]) == (
        0, False, {"fsdp_config": {"param_offload": False}, "ppo_micro_batch_size_per_gpu": 2})
    assert err.startswith(f"solve: note: {given} trains DPO with dynamic batch sizes on in the actor's update, which "
                          "split its pairs, so what is made from it turns them off and writes")


def test_two_lora_configs_are_refused_as_such_not_for_the_first_ones_regex(cli: Cli, tmp_path: Path):
    status, refused = _lora_refused(cli, tmp_path, "lora_rank: 16, target_modules: '.*mlp\\.gate'}, "
                                                   "{lora_rank: 16, target_modules: all-linear")
    assert (status, refused) == (0, [(
        "model.lora_configs holds 2 LoRA configs: Trinity refuses more than one (\"Only one lora adapter is "
        "supported\"): give it one LoRA config, or drop it for no LoRA")])


def test_explain_weighs_a_padded_models_dpo_pair_in_the_nearest_over_memory(cli: Cli, tmp_path: Path):
    given = example_with_algorithm(tmp_path, "dpo")
    status, out, _ = cli("--from-config", str(given), "--model-config", str(INTERNLM2), "--gpu", "h100", "--len",
                         "65536", "--explain")
    assert status == 1
    assert ("internlm2-7b on H100-80GB at 65536 tokens within the limits above (the nearest, Env + Offload on 6 GPUs: "
            "the memory model predicts 116.6 GiB of 73.2 usable, 43.4 GiB over)") in " ".join(out.split())


def test_an_empty_lora_adapter_path_on_trinity_05_is_counted_as_an_adapter_loaded():
    # verl before 0.8 turns LoRA on for any lora_adapter_path, an empty one too: it loads an adapter, whose rank is
    # its own, whatever target_modules the config gives.
    text = _lora_config() + ("trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model:\n"
                             "        lora_adapter_path: ''\n        target_modules: '.*q_proj'\n")
    config = read_trinity_config(text, "trinity.yaml", {}, "0.5")
    (counted,) = [words for words, code in zip(config.notes, config.note_codes, strict=True)
                  if code.value == "lora-counted-as-full"]
    assert ("count full fine-tuning's, as the tables measured (it loads an adapter, whose rank is the adapter's own)"
            in counted)


def test_verl_before_08s_target_modules_are_read_beside_its_lora_rank():
    # LoRA on by actor_rollout_ref.model.lora_rank (Trinity 0.5): its target_modules are read there, not from
    # model.lora_configs (which the config does not give).
    text = _lora_config() + ("trainer:\n  trainer_config:\n    actor_rollout_ref:\n      model:\n"
                             "        lora_rank: 16\n        target_modules: '.*q_proj'\n")
    config = read_trinity_config(text, "trinity.yaml", {}, "0.5")
    lines = {code.value: words for words, code in zip(config.notes, config.note_codes, strict=True)}
    assert ("its target_modules '.*q_proj' matches q_proj alone among qwen3's module names, which the config read "
            "alone assumes, knowing no model, its adapter counted on what it matches of the model's own names alone"
            in lines["lora-counted-as-full"])
    assert lines["lora-targets-saved-split"].startswith(
        "trainer.trainer_config.actor_rollout_ref.model.target_modules '.*q_proj' is a regular expression, which "
        "Trinity writes into each checkpoint's lora_adapter/adapter_config.json as its single characters (['.', '*', "
        "'q', '_', ...])")


def test_explains_more_gpus_names_a_configs_rollout_gpus_by_its_explorer(cli: Cli, tmp_path: Path):
    config = tmp_path / "grpo.yaml"
    config.write_text(GRPO_14B)
    status, out, _ = cli("--from-config", str(config), "--gpu", "h20", "--gpus", "6", "--explain")
    assert status == 1
    assert ("more_gpus 65536 tokens need 4 GPUs, but beside the 8 rollout GPUs (the config's explorer) a trainer takes "
            "8 GPUs, 2 more than the budget (with the 8 rollout GPUs, 16 in all)") in " ".join(out.split())


def test_both_fused_expert_projections_are_taken_together():
    assert peft_target_refusal(".*experts\\.(gate|up)_proj", None, QWEN3_MOE) is None
    assert peft_target_refusal(".*experts\\.gate_proj", None, QWEN3_MOE) == (
        "matches the routed experts' gate_proj without their up_proj, which PEFT fuses into gate_up_proj (\"Cannot "
        "convert PEFT target(s) ... because they are fused\")")


def _counted_as(lora: str) -> str:
    """The ``lora-counted-as-full`` line of test_lorarest4_s76's Qwen3-8B config with the LoRA config `lora`."""
    text = _lora_config(f"  lora_configs: [{{{lora}}}]\n")
    config = read_trinity_config(text, "trinity.yaml", {}, None)
    (words,) = [words for words, code in zip(config.notes, config.note_codes, strict=True)
                if code.value == "lora-counted-as-full"]
    return words


def test_an_exclusion_is_matched_whole_as_peft_matches_it():
    # '.*self_attn' names the attention module alone, whole: its projections stay in, every linear layer adapted.
    assert ("the plans count LoRA rank 16's states (the frozen base's fp32 weights and the adapter's on every linear "
            "layer but the output projection, unless --lora-rank gives another), and the tables") in _counted_as(
                "lora_rank: 16, target_modules: '.*_proj', exclude_modules: '.*self_attn'")


def test_a_regex_that_both_architectures_refuse_is_refused_for_each_ones_reason():
    # the experts' gate_proj alone: no module of a dense model, and fused on a mixture of experts (lorarest5: refused
    # as PEFT fails on it, where it was counted as full fine-tuning); each on its own names since peftgap_s77 (the
    # config's reading gave both reasons in one line)
    catalog = load_catalog()
    refused = {name: lora_targets_problem(".*experts\\.gate_proj", None, catalog.model(name))
               for name in ("Qwen3-8B", "Qwen3-30B-A3B")}
    assert [(problem.code.value, problem.words.split(": peft matches")[0]) for problem in refused.values()
            if problem is not None] == [
        ("lora-configs-refused", ("model.lora_configs[0].target_modules '.*experts\\.gate_proj', on Qwen3-8B (a dense "
                                  "model), matches no module")),
        ("lora-configs-refused", ("model.lora_configs[0].target_modules '.*experts\\.gate_proj', on Qwen3-30B-A3B (a "
                                  "mixture of experts), matches the routed experts' gate_proj without their up_proj, "
                                  "which PEFT fuses into gate_up_proj (\"Cannot convert PEFT target(s) ... because "
                                  "they are fused\")"))]


def test_a_running_job_on_whole_nodes_is_kept_only_where_no_job_took_one_of_them(cli: Cli, tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch):
    # big runs on both nodes (16 trainer GPUs); the required job, placed first, takes one of them: big is not kept on
    # the two (it was, on the node the required job took too, and the greedy placement failed), but placed afresh.
    big = {"name": "big", "model": "Qwen3-32B", "max_model_len": "64k", "rollout_gpus": 0}
    now = tmp_path / "now.json"
    now.write_text(cli("cluster", str(_pool_fleet(tmp_path, 2, [big])), "--json", "--no-widen")[1], encoding="utf-8")
    must = {"name": "must", "model": "Qwen3-14B", "max_model_len": "32k", "rollout_gpus": 6, "required": True}
    _no_first_placement(monkeypatch)
    status, err, lines, answer = _fallback(cli, _pool_fleet(tmp_path, 2, [must, big]), now, "--no-widen")
    assert (status, err, lines[0], running_now(lines)) == (0, "", GREEDY.replace("(of 4): 4", "(of 2): 2"),
                                                           "running now: 0 stay, 1 moves, 0 stop; 1 starts")
    assert (_where(answer), answer["unplaced"]) == ([("must", [1], list(range(8)), 2, 6, "starts"),
                                                     ("big", [0], [0, 1, 2, 3], 4, 0, "moves")], [])
