"""Tests that kill the mutants of session 65's code that its tests let live (helper mutants9, session 66): each
asserts what the code does, where a mutant of it would do otherwise."""

from __future__ import annotations

import importlib
import time
from math import ceil
from pathlib import Path

import pytest
from cluster_api import buy, place
from test_cluster import CATALOG
from test_clusterbuy_s60 import fleet_file
from test_clusterdedup_s65 import TOO_LONG, UNASKED, taking_longer
from test_minnodes_s64 import _questions_per_second
from test_writefix_s56 import catalog, plans

import solver.cluster.options
import solver.cluster.search
from solver.cluster.options import (
    Option,
    Planner,
    TooManyPatterns,
    WaysLimit,
    fleet_options,
    host_footprints,
    pools_with_ways,
)
from solver.cluster.reasons import reasons_may_ask_reach
from solver.render import cluster_text
from solver.results import Plan
from solver.rules import COMMAND_OPTIONS
from solver.tables import WAYS_QUESTIONS_PER_SECOND, TableError, load_catalog, load_fleet, load_weights
from solver.tables.reading import load_validated
from solver.tables.schema import GpuType
from solver.trinity import patch_trinity_config, trinity_config_problems

YARN_4 = {"factor": 4.0, "original_max_position_embeddings": 32768,
          "rope_theta": 1000000}  # a base: no line that Trinity 0.6's trainer needs one (ropecheck, s79)
UNRESOLVED_TYPE = ("unresolved-value-refused", (
    "model.rope_scaling.type: cannot resolve '${nope}': the config has no nope; every Trinity release refuses the "
    "config as it loads it (OmegaConf resolves each value then)"))


def _problems(mapping: dict[str, object]) -> list[tuple[str, str]]:
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, load_catalog().model("8B"), 8)]


def test_a_legacy_type_that_cannot_be_read_is_said_with_the_rope_type_it_names_twice():
    # rope_type() reads the legacy type beside rope_type: its problem comes first, before what the type's check finds
    problems = _problems({"model": {"model_path": "x", "max_model_len": 8192,
                                    "rope_scaling": {"rope_type": "yarn", "type": "${nope}", **YARN_4}}})
    assert [code for code, _ in problems] == ["unresolved-value-refused", "rope-scaling-unneeded"]
    assert problems[0] == UNRESOLVED_TYPE


def test_two_rope_types_of_which_one_cannot_be_read_are_no_second_problem():
    # the type that cannot be read is a problem already: no 'names its type twice' about a None
    rope_scaling = {"rope_type": "yarn", "type": "${nope}", **YARN_4}
    assert _problems({"model": {"model_path": "x", "rope_scaling": rope_scaling}}) == [UNRESOLVED_TYPE]


def test_the_legacy_pairs_vllm_takes_are_one_way_round():
    # (rope_type, type): longrope beside the legacy su is taken; su as rope_type beside longrope is two types
    factors = {"short_factor": [1.0], "long_factor": [1.0],  # longrope's keys, without which transformers refuses it
               "original_max_position_embeddings": 40960,  # and vLLM, which reads it as given (s73)
               "rope_theta": 1000000}
    assert _problems({"model": {"model_path": "x", "rope_scaling": {"rope_type": "longrope", "type": "su",
                                                                    **factors}}}) == []
    (code, words), *others = _problems({"model": {"model_path": "x",
                                                  "rope_scaling": {"rope_type": "su", "type": "longrope", **factors}}})
    assert code == "rope-scaling-wrong" and "rope_type 'su' and type 'longrope'" in words
    # and su, Phi-3's legacy name, is no RoPE scaling vLLM builds, reading it as given (tests/test_ropesix_s73.py)
    assert [(code, words.partition(":")[0]) for code, words in others] == [
        ("rope-scaling-unbuilt-refused", "model.rope_scaling")]


def test_a_missing_value_in_the_rollout_models_typed_fields_is_not_refused():
    # explorer.rollout_model is a typed section: only inside its rope_scaling does the merge keep a ???
    problems = _problems({"model": {"model_path": "x"}, "explorer": {"rollout_model": {"engine_type": "???"}}})
    assert problems == [("unresolved-value", ("cannot check explorer.rollout_model.engine_type is ???, a value missing "
                                              "(OmegaConf refuses to read it): give it"))]


@pytest.mark.parametrize("mode", [{}, {"mode": "train"}])
def test_a_missing_rope_scaling_of_the_rollout_model_itself_loads(mode: dict[str, str]):
    # the section itself is a typed field (Optional[dict]): the merge keeps its default, whether it is read or not
    missing = {"explorer": {"rollout_model": {"rope_scaling": "???"}}}
    assert _problems({"model": {"model_path": "x"}, **mode, **missing}) == []


def test_a_reference_into_trainer_config_to_a_field_name_is_refused():
    # trainer.trainer_config is typed Any: nothing fills a key there, though 'seed' is a field's name elsewhere
    ((code, words),) = _problems({"model": {"model_path": "x", "critic_model_path": "${trainer.trainer_config.seed}"},
                                  "trainer": {"trainer_config": {}}})
    assert code == "unresolved-value-refused" and "the config has no trainer.trainer_config.seed" in words


def test_a_missing_value_deeper_in_the_rollout_model_is_not_its_rope_scalings():
    # only explorer.rollout_model.rope_scaling of that section keeps a ???: a value deeper elsewhere there is not judged
    problems = _problems({"model": {"model_path": "x", "critic_model_path": "${explorer.rollout_model.extra.x}"},
                          "explorer": {"rollout_model": {"extra": {"x": "???"}}}})
    # the critic's model path is read first since s83's criticsp (a critic of another model keeps its own SP)
    assert problems[0] == ("unresolved-value", (
        "cannot check model.critic_model_path: cannot resolve '${explorer.rollout_model.extra.x}': "
        "explorer.rollout_model.extra.x is ???, a value missing (OmegaConf refuses to read it): give it"))
    assert [problem[0] for problem in problems[1:]] == ["no-such-key-refused"]  # the test's own key, extra


def test_write_keeps_the_comment_line_after_a_dropped_sum_comment_on_its_own_line():
    text = ("model:\n  model_path: q/Qwen3-4B\n  max_prompt_tokens: 2048\n  max_response_tokens: 6144\n"
            "  max_model_len: 8192  # prompt + response\n  # the team's lengths\n  seed: 1\n")
    assert patch_trinity_config(text, plans()[1], catalog().model("4B")) == (
        "model:\n  model_path: q/Qwen3-4B\n  max_prompt_tokens: 2048\n  max_response_tokens: 6144\n"
        "  max_model_len: 24576\n  # the team's lengths\n  seed: 1\n"
        "trainer:\n  ulysses_sequence_parallel_size: 2\n  max_token_len_per_gpu: 24576\n")


def test_a_mapping_given_for_a_list_of_text_names_its_keys(tmp_path: Path):
    # the list's items are text, no model of rft-solver's: no fields to name, and no traceback
    path = tmp_path / "h800.yaml"
    path.write_text('gpu: H800-80GB\nmemory_gb: 80\nsource: "made-up"\naliases: {h8: 1}\n', encoding="utf-8")
    with pytest.raises(TableError) as raised:
        load_validated(GpuType, path)
    assert str(raised.value) == f"{path}: aliases: must be a list, got a mapping (keys: h8)"


def test_a_ways_limit_counts_from_the_questions_the_planner_has_asked_already():
    planner = Planner(CATALOG, load_weights(), "auto", 2.0)
    planner.asked = 7
    limit = WaysLimit.of(planner, time.monotonic())
    assert limit.questions == 7 + ceil(WAYS_QUESTIONS_PER_SECOND * 2.0)
    assert limit.reached(planner) is None
    planner.asked = limit.questions
    assert limit.reached(planner) == "questions"


def _ways_questions(fleet_path: Path) -> int:
    planner = Planner(CATALOG, load_weights(), "auto")
    fleet_options(planner, load_fleet(fleet_path, CATALOG))
    return planner.asked


def test_the_ways_limit_asks_the_job_of_more_priority_first_whatever_the_files_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pool = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
    low = {"name": "low", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1, "priority": 1}
    high = {"name": "high", "model": "Qwen3-1.7B", "max_model_len": 8192, "rollout_gpus": 1, "priority": 2}
    (tmp_path / "high").mkdir()
    alone = _ways_questions(fleet_file({"pools": [pool], "jobs": [high]}, tmp_path / "high"))
    _questions_per_second(monkeypatch, alone)  # at 1 s, as many questions as the high job's ways ask
    result = place(load_fleet(fleet_file({"pools": [pool], "jobs": [low, high]}, tmp_path), CATALOG),
                   catalog=CATALOG, time_limit_s=1)
    assert result.ways_cut_short == ("low",) and [placement.job for placement in result.placements] == ["high"]


def test_host_needs_that_no_fewer_classes_keep_few_are_all_rounded_up_to_the_largest(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    pool = {"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8, "host_ram_gb": 256}
    jobs = [{"name": f"j{i}", "model": "Qwen3-0.6B", "max_model_len": 8192} for i in range(3)]
    fleet = load_fleet(fleet_file({"pools": [pool], "jobs": jobs}, tmp_path), CATALOG)
    needs = [1500, 1800, 2000]  # tenths of a GiB, each past its 4 GPUs' share of the node's 2560
    options = [Option(job=i, pool=0, plan=Plan.model_construct(), size=4, whole_nodes=0, rollout_gpus=0, gain=0,
                      cost=0, host_tenths=need) for i, need in enumerate(needs)]
    counted = solver.cluster.options.patterns

    def too_many(*args: object, limit: int | None = None, **kwargs: object) -> object:
        if limit is not None:  # every grouping into two classes or more is too many: one class is left
            raise TooManyPatterns
        return counted(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(solver.cluster.options, "patterns", too_many)
    rounded, pools = host_footprints(fleet, options)
    assert [option.host_tenths for option in rounded] == [2000, 2000, 2000] and pools == ("a100",)


def test_an_infeasible_placement_says_its_cut_short_and_undecided_ways_are_not_the_required_jobs(tmp_path: Path):
    # infeasible stands only where the jobs cut short, and the undecided ways, are not the required jobs': it says so
    pool = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
    too_long = {"name": "too-long", "model": "Qwen3-14B", "max_model_len": 4_000_000, "rollout_gpus": 0,
                "required": True}
    fleet = load_fleet(fleet_file({"pools": [pool], "jobs": [too_long]}, tmp_path), CATALOG)
    result = place(fleet, catalog=CATALOG, time_limit_s=5)
    assert result.status == "infeasible"
    lines = cluster_text(result.model_copy(update={"ways_cut_short": ("probe",), "undecided_ways": 2}), fleet,
                         width=300).splitlines()
    assert lines[1:3] == [
        ("the time limit cut working out the jobs' ways short: probe got none (the jobs of more priority are asked "
         "first), and as none of them is required, their ways would not make room for the required jobs"),
        ("2 questions about the jobs' ways to run ran out of time (time_limit_s), none behind the required jobs' ways: "
         "the required jobs do not fit whatever they would answer")]
    assert lines[3].startswith("pool a100: ")  # no line beside them that calls the infeasible answer unproven


POOL = {"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}
PROBE = {"name": "probe", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1}


def test_a_placed_or_bought_answer_says_what_a_job_cut_short_leaves_and_an_interrupted_one_not_to_raise_the_limit(
        tmp_path: Path):
    fleet = load_fleet(fleet_file({"pools": [POOL], "jobs": [PROBE]}, tmp_path), CATALOG)
    placed, bought = place(fleet, catalog=CATALOG, time_limit_s=5), buy(fleet, catalog=CATALOG, time_limit_s=5)
    cut = ("the time limit cut working out the jobs' ways short: late got none (the jobs of more priority are asked "
           "first), ")
    late = {"ways_cut_short": ("late",)}
    assert cluster_text(placed.model_copy(update=late), fleet, width=300).splitlines()[1] == (
        f"{cut}so the placement is not proven best (raise time_limit_s)")
    assert cluster_text(bought.model_copy(update=late), fleet, width=300).splitlines()[1:3] == [
        f"{cut}so no purchase places them (raise time_limit_s)",
        "the placement (solver.placement_configs writes the configs)"]
    # the command's words name the command that writes them, not the flag alone
    assert cluster_text(bought, fleet, width=300, option_names=COMMAND_OPTIONS).splitlines()[1] == (
        "the placement (solve cluster --emit-dir writes the configs)")
    untied = cluster_text(placed.model_copy(update={"tie_broken": False, "interrupted": True}), fleet, width=300)
    assert untied.splitlines()[1] == ("placement optimal; tie-break not proven: Ctrl-C stopped the pick among the "
                                      "equally good placements, so another run or workers may give another of them")
    interrupted = placed.model_copy(update={"bound": None, "interrupted": True})
    assert cluster_text(interrupted, fleet, width=300).splitlines()[0] == (
        "status: optimal; placed priority (of 1): 1, no bound proven (interrupted before the search's first placement: "
        "the greedy one stands)")


def test_the_search_leaves_the_reasons_time_only_where_a_job_with_a_way_lacks_one_in_a_pool_it_may_use(tmp_path: Path):
    fleet = load_fleet(fleet_file({"pools": [POOL, {**POOL, "name": "more"}], "jobs": [PROBE]}, tmp_path), CATALOG)
    options = [Option(job=0, pool=pool, plan=Plan.model_construct(), size=4, whole_nodes=0, rollout_gpus=1, gain=0,
                      cost=0) for pool in (0, 1)]
    assert solver.cluster.search._time_for_reasons(fleet, pools_with_ways(options), 2.0) == 0.0
    assert solver.cluster.search._time_for_reasons(fleet, pools_with_ways(options[:1]), 2.0) == (
        solver.cluster.search.REASONS_SHARE * 2.0)


def test_whether_reasons_may_ask_reach_asks_nothing_about_a_pool_where_the_job_has_a_way(tmp_path: Path):
    # a pool where the job has a way trains its length: no question about it, so no deterministic time spent
    fleet = load_fleet(fleet_file({"pools": [POOL], "jobs": [PROBE]}, tmp_path), CATALOG)
    planner = Planner(CATALOG, load_weights(), "auto", 5.0)
    assert not reasons_may_ask_reach(planner, fleet, {0: frozenset({0})})
    assert (planner.reach_work.spent, planner.asked) == (0.0, 0)


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_a_purchase_says_the_wall_clock_cut_the_reasons_where_the_count_does_not(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # as a placement's: the jobs' ways end past the net at half of a 2 s limit, so the reason is left unasked
    _questions_per_second(monkeypatch, 1000, wall_share=0.5)
    module = importlib.import_module("solver.cluster.buy")  # the package's `buy` is the function
    taking_longer(monkeypatch, module, "_ways_by_tier", 1.1)
    result = buy(load_fleet(fleet_file({"pools": [POOL], "jobs": [TOO_LONG]}, tmp_path), CATALOG),
                 catalog=CATALOG, time_limit_s=2)
    assert (result.status, result.ways_cut_short, result.wall_clock_stopped) == ("infeasible", (), ("ways",))
    assert [(entry.reason, entry.reason_code) for entry in result.fits_nowhere] == [(UNASKED, "no-way-to-run")]
