"""Mutation testing of sessions 63-64's code (review s64, helper mutants7): tests of real behaviour that kill the hand
mutants the other test files let live: vLLM's derived length, --total-gpus, map budgets, the at_least stretch,
more_nodes_reach, own-GPU interconnects and the API's words (each test names the mutant it kills)."""
from __future__ import annotations

from pathlib import Path

import pytest
from cluster_api import place
from test_clusterbuy_s60 import CATALOG, fleet_file
from test_clusterreq_s63 import BOX, ONE_NODE, REACH, TWO_SMALL, _reach
from test_vllmkeys_s64 import _folder, _no_long_length_variable  # noqa: F401 (an autouse fixture)
from test_vllmlen2_s63 import _gemma3

import solver
import solver.cluster.options
import solver.cluster.reasons
import solver.cluster.search
from solver.api import config_query
from solver.cluster.options import REACH_SHARE
from solver.query import MAX_ESTIMATED_GPUS, Query, QueryError
from solver.results import Answer, CautionCode
from solver.rules import API_OPTIONS
from solver.tables import DETERMINISTIC_PER_SECOND, load_catalog, load_fleet, load_model_config
from solver.trinity import read_trinity_config, trinity_config_problems

THETA = {"rope_theta": 10000}
"""A base in a given mapping: without one, no release named, a line says Trinity 0.6's trainer needs it (ropecheck,
s79), which is not these tests' subject."""


def _codes(model_folder: Path, mapping: dict) -> list[str]:
    return [problem.code.value for problem in trinity_config_problems(mapping, load_model_config(model_folder), 8)]


def test_of_per_layer_type_scalings_vllm_takes_the_last_factor_given(tmp_path: Path):
    # mutant v07: the first factor kept (2.0: 65536)
    folder = _folder(tmp_path, rope_parameters={"full_attention": {"rope_type": "linear", "factor": 2.0},
                                                "sliding_attention": {"rope_type": "linear", "factor": 4.0}})
    model = load_model_config(folder)
    assert (model.rope_scaling, model.vllm_context) == ("linear", 131072)


def test_a_yarn_without_an_original_length_stretches_max_position_embeddings_not_a_smaller_key(tmp_path: Path):
    # mutant v09: the smallest key's 8192 taken as the YaRN's original (8192 x 4 = 32768)
    model = load_model_config(_folder(tmp_path, seq_length=8192, rope_scaling={"rope_type": "yarn", "factor": 4.0}))
    assert (model.native_context, model.vllm_length_key, model.vllm_context) == (32768, ("seq_length", 8192), 131072)


def test_a_scaling_given_over_the_own_one_stretches_the_smaller_key(tmp_path: Path):
    # mutant v19: the given linear x2 over max_position_embeddings (65536), not over seq_length's 8192 (16384)
    folder = _folder(tmp_path, seq_length=8192, rope_scaling={"rope_type": "linear", "factor": 4.0})
    given = {"model": {"max_model_len": 20000, "rope_scaling": {"rope_type": "linear", "factor": 2.0, **THETA}}}
    assert _codes(folder, given) == ["rope-scaling-short-refused"]
    given["model"]["max_model_len"] = 16384
    assert _codes(folder, given) == []


def test_a_yarn_given_over_the_own_scaling_takes_its_original_length(tmp_path: Path):
    # mutant v21: the given YaRN's original 16384 ignored (32768 x 4 = 131072, not 16384 x 4 = 65536)
    folder = _folder(tmp_path, rope_scaling={"rope_type": "linear", "factor": 4.0})
    given = {"model": {"max_model_len": 100000, "rope_scaling": {
        "rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16384}}}
    assert _codes(folder, given) == ["rope-scaling-replaces-own", "rope-scaling-short-refused"]


def test_a_model_max_length_bounds_a_given_scaling_from_below(tmp_path: Path):
    # mutant v23: vllm_longest_given without the config.json's model_max_length (32768 x 2 = 65536 < 100000)
    folder = _folder(tmp_path, model_max_length=131072, rope_scaling={"rope_type": "linear", "factor": 4.0})
    given = {"model": {"max_model_len": 100000, "rope_scaling": {
        "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768}}}
    assert _codes(folder, given) == ["rope-scaling-replaces-own"]


def test_a_smaller_key_that_is_not_model_max_length_allows_no_length_past_a_given_scaling(tmp_path: Path):
    # mutant v24: seq_length's 8192 taken as a length vLLM allows besides (as a model_max_length is)
    folder = _folder(tmp_path, seq_length=8192, rope_scaling={"rope_type": "linear", "factor": 4.0})
    given = {"model": {"max_model_len": 6000, "rope_scaling": {
        "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 2048}}}
    assert _codes(folder, given) == ["rope-scaling-replaces-own", "rope-scaling-short-refused"]
    assert load_model_config(folder).vllm_allowed_length == 0


def test_a_fractional_derived_length_is_lowered_to_the_whole_tokens_below_it(tmp_path: Path):
    # mutant v29: rounded up (36045, which vLLM refuses too)
    folder = _folder(tmp_path, rope_scaling={"rope_type": "linear", "factor": 1.1})
    problems = trinity_config_problems({"model": {"max_model_len": 40000}}, load_model_config(folder), 8)
    assert [problem.code.value for problem in problems] == ["past-native-on-own-scaling-refused"]
    assert problems[0].words.startswith("model.max_model_len 40000 is beyond the 36044.8 that the rollout's vLLM")
    assert problems[0].words.endswith("or lower max_model_len to 36044")


def test_a_length_at_the_own_scalings_reach_asks_only_to_remove_the_given_one(tmp_path: Path):
    # mutant v39: at exactly 131072, the own scaling's reach, it asked to lower the length to 131072 too
    folder = _folder(tmp_path, rope_scaling={"rope_type": "linear", "factor": 4.0})
    given = {"model": {"max_model_len": 131072, "rope_scaling": {
        "rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 32768}}}
    problems = trinity_config_problems(given, load_model_config(folder), 8)
    assert [problem.code.value for problem in problems] == ["rope-scaling-replaces-own", "rope-scaling-short-refused"]
    assert problems[1].words.endswith("set before Ray starts; remove model.rope_scaling")


def test_a_gemma_3s_yarn_refused_as_short_is_not_refused_again_for_the_factor_vllm_skips(tmp_path: Path):
    # mutant v40: both lines, where the short YaRN's refusal says it already
    folder = _gemma3(tmp_path, max_position_embeddings=32768, _name_or_path="my-gemma3")
    short = {"model": {"max_model_len": 65536, "rope_scaling": {
        "rope_type": "yarn", "factor": 1.5, "original_max_position_embeddings": 32768, **THETA}}}
    assert _codes(folder, short) == ["rope-scaling-short-refused"]


def test_a_short_yarn_at_exactly_the_model_max_length_is_not_refused(tmp_path: Path):
    # mutant v41: refused at the model_max_length itself, which vLLM takes
    folder = _folder(tmp_path, model_max_length=65536)
    short = {"model": {"max_model_len": 65536, "rope_scaling": {
        "rope_type": "yarn", "factor": 1.5, "original_max_position_embeddings": 32768, **THETA}}}
    assert _codes(folder, short) == ["rope-scaling-wrong"]
    short["model"]["max_model_len"] = 65537
    assert _codes(folder, short) == ["rope-scaling-short-refused"]


def test_config_query_splits_total_gpus_with_the_configs_rollout():
    # mutant t11: the API's total_gpus without rollout_gpus lost a config's rollout of 0 (mode: train), asking for one
    text = (Path(__file__).parents[1] / "docs" / "examples" / "trinity.yaml").read_text(encoding="utf-8")
    query = config_query(load_catalog(), read_trinity_config(text, "trinity.yaml", {}), gpu="h100", total_gpus=16)
    assert (query.budget_gpus, query.rollout_gpus, query.total_gpus, query.exact) == (14, 2, 16, False)
    train = read_trinity_config(text.replace("mode: both", "mode: train"), "trinity.yaml", {})
    query = config_query(load_catalog(), train, gpu="h100", total_gpus=16)
    assert (query.budget_gpus, query.rollout_gpus, query.total_gpus) == (16, 0, 16)


def _one_pool_fleet(tmp_path: Path, pool: str, job: str) -> Path:
    fleet = tmp_path / "fleet.yaml"
    fleet.write_text(f"pools:\n  - {{{pool}}}\njobs:\n  - {{{job}}}\n", encoding="utf-8")
    return fleet


def test_a_stretch_whose_room_keeping_stop_is_the_least_asked_keeps_that_plans_token_budget(tmp_path: Path):
    # mutant c05: where the stop that keeps the caution's room is exactly at_least, the least was asked again at the
    # run's margin, where --token-budget auto raised the budget back onto thin headroom (0.54 GiB to spare)
    fleet = _one_pool_fleet(tmp_path, "name: small, gpu: L40S-48GB, nodes: 1, gpus_per_node: 4",
                            "name: long, model: Qwen3-0.6B, max_model_len: {at_least: 129024}")
    (placed,) = solver.place(fleet, token_budget="auto").placements
    plan = placed.plan
    assert (plan.max_model_len, plan.max_token_len_per_gpu, round(plan.headroom_gb, 2)) == (129024, 32256, 1.13)
    assert CautionCode.THIN_HEADROOM not in plan.caution_codes


def test_a_pools_gpu_type_of_your_own_given_in_mib_may_state_its_interconnect(tmp_path: Path):
    # mutant o13: gpu_interconnect refused beside gpu_memory_mib alone (it asked for the memory that was given)
    fleet = _one_pool_fleet(tmp_path, ("name: lab, gpu: RTX-PRO-5000, gpu_memory_mib: 49152, gpu_interconnect: nvlink, "
                                       "nodes: 1, gpus_per_node: 4"),
                            "name: a, model: Qwen3-8B, max_model_len: 16384")
    (placed,) = solver.place(fleet).placements
    assert placed.pool == "lab" and CautionCode.INTERCONNECT_NOT_STATED not in placed.plan.caution_codes


BOTH_OR_NONE = ("budgets: give one or more GPU counts (8, 16, 32), and not with gpus_up_to, which maps the budgets 1 "
                "to N")


@pytest.mark.parametrize(("keywords", "error"), [
    ({"budgets": [8], "gpus_up_to": 4}, BOTH_OR_NONE),
    ({"budgets": []}, BOTH_OR_NONE),
    ({"budgets": [0]}, "budgets must be a whole number from 1 to 64, got 0"),
    ({"budgets": [8, 1000]}, "budgets must be a whole number from 1 to 64, got 1000"),
])
def test_map_plans_names_its_budgets_keyword(keywords: dict, error: str):
    # mutant w06: the API's budgets named as the command's flag, --budgets
    with pytest.raises(QueryError) as raised:
        solver.map_plans("8B", gpu="h100", **keywords)
    assert str(raised.value) == error


def test_a_more_nodes_question_left_undecided_answers_none_not_false(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # mutant r05: a question at the most GPUs whose time ran out (status unknown) went on to the next budget and
    # ended in False, "no number of nodes", where nothing was decided
    asked = solver.cluster.options.Planner.answer  # the reasons' questions (s65: before, reasons' answer_for)

    def undecided_at_the_most_gpus(planner: object, query: Query, *args: object, **kwargs: object) -> Answer:
        answer = asked(planner, query, *args, **kwargs)  # type: ignore[arg-type]
        if query.budget_gpus != MAX_ESTIMATED_GPUS:
            return answer
        return answer.model_copy(update={"status": "unknown", "plans": ()})

    monkeypatch.setattr(solver.cluster.options.Planner, "answer", undecided_at_the_most_gpus)
    path = fleet_file(REACH, tmp_path)
    assert _reach(solver.place(path)) == {job: (None, None) for job in ("mid", "long", "huge")}


def test_a_trinity_06_trainer_key_refused_for_05_names_the_apis_patch():
    # mutant w11: the plain refusal (not remove padding's) named --write to an API caller
    problems = trinity_config_problems({"model": {"max_model_len": 8192}, "trainer": {"balance_batch": True}},
                                       load_catalog().model("8B"), 8, version="0.5", option_names=API_OPTIONS)
    assert [(problem.code.value, problem.words) for problem in problems] == [("trainer-keys-refused", (
        "trainer.balance_batch: a key of Trinity 0.6's trainer, which Trinity 0.5 refuses (its TrainerConfig has no "
        "such key), so the config does not load: remove it (solver.trinity.patch_trinity_config does)"))]


def test_a_pool_whose_lengths_are_left_undecided_keeps_the_questions_share_from_the_search(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # mutant r09: whether the model trains some length on the box was left undecided (its time ran out), which
    # counts as "may ask"; the mutant counted it as "trains none" and gave the search's stages the questions' share
    asked = solver.cluster.options.Planner.answer  # the reasons' questions (s65: before, reasons' answer_for)

    def longest_undecided(planner: object, query: Query, *args: object, **kwargs: object) -> Answer:
        answer = asked(planner, query, *args, **kwargs)  # type: ignore[arg-type]
        return answer if query.objective != "max_len" else answer.model_copy(update={"status": "unknown", "plans": ()})

    given: list[float] = []
    set_limits = solver.cluster.search._set_limits

    def recorded(solver_: object, work: float, deadline: float) -> None:
        given.append(work)
        set_limits(solver_, work, deadline)

    monkeypatch.setattr(solver.cluster.options.Planner, "answer", longest_undecided)
    monkeypatch.setattr(solver.cluster.search, "_set_limits", recorded)
    two_pools = {"pools": [BOX, ONE_NODE], "jobs": [REACH["jobs"][1], TWO_SMALL["jobs"][1]]}
    result = place(load_fleet(fleet_file(two_pools, tmp_path), CATALOG), catalog=CATALOG, time_limit_s=10)
    assert [(placed.job, placed.pool) for placed in result.placements] == [("long", "a100"), ("b", "box")]
    assert given[0] == pytest.approx(0.6 * DETERMINISTIC_PER_SECOND * 10 * (1 - REACH_SHARE))


def test_the_more_nodes_questions_share_is_the_one_docs_cluster_md_states(tmp_path: Path):
    # mutant r13: REACH_SHARE 0.2; docs/cluster.md says the questions take "together at most 2%" of the run's time
    docs = (Path(__file__).parents[1] / "docs" / "cluster.md").read_text(encoding="utf-8")
    assert "together at most 2% of it" in " ".join(docs.split())
    planners: list[solver.cluster.options.Planner] = []
    planner_class = solver.cluster.Planner

    def kept(*args: object, **kwargs: object) -> solver.cluster.options.Planner:
        planners.append(planner_class(*args, **kwargs))  # type: ignore[arg-type]
        return planners[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(solver.cluster, "Planner", kept)
        place(load_fleet(fleet_file(REACH, tmp_path), CATALOG), catalog=CATALOG, time_limit_s=10)
    assert planners[-1].reach_work.work == pytest.approx(0.02 * DETERMINISTIC_PER_SECOND * 10)
