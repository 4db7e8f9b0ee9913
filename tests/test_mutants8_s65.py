"""Tests that kill the hand mutants of s64's code (helper mutants8, s65) that the other test files let live: each
names its mutant. The runner and the mutants: /work/keep/s65/mutants8/."""

from __future__ import annotations

import dataclasses
import importlib
import json
import math
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_minnodes_s64 import BUY_FLEET, _fleet_file, _questions_per_second

import solver
import solver.cluster.search
from solver.api import answer_query
from solver.cluster.options import Planner, WaysLimit, fleet_options, pools_with_ways
from solver.cluster.reasons import reasons_may_ask_reach
from solver.cluster.search import Grown
from solver.results import past_derived_length_words
from solver.tables import MAX_GPUS, Fleet, Job, Pool, QueryError, load_catalog, load_fleet, load_weights
from solver.tables.model_config import load_model_config
from solver.trinity import EngineError, plan_settings, trinity_config_problems, trinity_fragment

ROOT = Path(__file__).resolve().parent.parent
CATALOG = load_catalog()
A100 = Pool(name="a", gpu="A100-80GB", nodes=1, gpus_per_node=8)
BOX_4090 = Pool(name="box", gpu="RTX-4090", nodes=1, gpus_per_node=4, host_ram_gb=88)
"""4 RTX 4090s, whose whole pool trains Qwen3-4B at some length but not at 32768 (88 GiB: it loads on 4 in 81.1
without Offload; Offload needs 93.4 or more)."""
BUY_MODULE = importlib.import_module("solver.cluster.buy")
"""The module (`solver.cluster.buy` is its function there)."""
BIG_4090 = Pool(name="big", gpu="RTX-4090", nodes=8, gpus_per_node=8, host_ram_gb=256)
"""64 RTX 4090s (the most trainer GPUs the planner estimates), which train Qwen3-4B at some length but not 131072."""


def _may_ask(pools: list[Pool], job: Job, **planner: str) -> tuple[list[str], bool, float]:
    """The pools `job` has ways in, whether the reasons may ask whether more nodes reach its length, and the
    deterministic time asking that took."""
    fleet = Fleet(pools=tuple(pools), jobs=(job,))
    asker = Planner(CATALOG, load_weights(), "auto", **planner)  # type: ignore[arg-type]
    options = fleet_options(asker, fleet).options
    may = reasons_may_ask_reach(asker, fleet, pools_with_ways(options))
    return sorted({pools[option.pool].name for option in options}), may, asker.reach_work.spent


def test_a_pool_the_job_may_not_use_is_not_asked_about():
    # r03 (`not job.may_use(pool)` dropped): the job's length is beyond box's reach, which trains some length, so the
    # reasons may ask about box, but only where the job may use it.
    job = Job(name="j", model="Qwen3-4B", max_model_len=32768)
    ways, may, spent = _may_ask([A100, BOX_4090], job)
    assert (ways, may) == (["a"], True) and spent > 0
    assert _may_ask([A100, BOX_4090], job.model_copy(update={"pool": "a"})) == (["a"], False, 0.0)


def test_a_64_gpu_pool_with_no_token_budget_left_to_try_asks_nothing():
    # r04 (the `_reach_budgets` skip dropped) and r08 (the question its reason answered asked again): on 64 GPUs the
    # reason's own question is the most trainer GPUs the planner asks about; with --token-budget auto there is no
    # other budget to try, so nothing is asked, not even whether the pool trains the length. With Trinity's default
    # budget, auto is left to try: the reasons may ask.
    job = Job(name="j", model="Qwen3-4B", max_model_len=131072)
    assert _may_ask([A100, BIG_4090], job, token_budget="auto") == (["a"], False, 0.0)
    ways, may, spent = _may_ask([A100, BIG_4090], job)
    assert (ways, may) == (["a"], True) and spent > 0


def test_with_the_questions_time_spent_the_reasons_may_ask():
    # r10 (a question not asked for want of time counted as no plan): where the questions' deterministic time is spent
    # already, whether box trains the length is unknown, which counts as may (the search keeps what is left, nothing).
    fleet = Fleet(pools=(A100, BOX_4090), jobs=(Job(name="j", model="Qwen3-4B", max_model_len=32768),))
    asker = Planner(CATALOG, load_weights(), "auto")
    options = fleet_options(asker, fleet).options
    asker.reach_work.spent = asker.reach_work.work
    assert reasons_may_ask_reach(asker, fleet, pools_with_ways(options)) is True
    assert asker.reach_work.left == 0.0


def test_jobs_of_one_model_and_pool_are_asked_about_at_their_own_lengths():
    # r11 (the answers kept by model, train batch and pool, not length): at 4096 box's whole pool trains Qwen3-4B, and
    # only its 3 rollout GPUs leave it no layout (nothing to ask); at 16384 the length is beyond box's reach.
    jobs = tuple(Job(name=f"j{length}", model="Qwen3-4B", max_model_len=length, rollout_gpus=3)
                 for length in (4096, 16384))
    for asked, may in (((jobs[0],), False), ((jobs[1],), True), (jobs, True)):
        fleet = Fleet(pools=(A100, BOX_4090), jobs=asked)
        asker = Planner(CATALOG, load_weights(), "auto")
        options = fleet_options(asker, fleet).options
        assert {option.pool for option in options} == {0}
        assert reasons_may_ask_reach(asker, fleet, pools_with_ways(options)) is may


def test_the_ways_stop_once_the_questions_asked_reach_the_limit():
    # w01 (`>=` -> `>`): each of these jobs asks 4 new questions of a one-node pool; a limit of 4 lets the first job
    # alone be asked, 5 the second too (a job's ways are asked whole), 8 the second alone past it.
    fleet = Fleet(pools=(A100,), jobs=tuple(Job(name=model, model=model, max_model_len=8192)
                                            for model in ("Qwen3-4B", "Qwen3-8B", "Qwen3-14B")))
    cut = {questions: fleet_options(Planner(CATALOG, load_weights(), "auto"), fleet,
                                    WaysLimit(questions=questions, deadline=math.inf)).cut_short
           for questions in (1, 4, 5, 8, 9, 12)}
    assert cut == {1: (1, 2), 4: (1, 2), 5: (2,), 8: (2,), 9: (), 12: ()}


def test_a_time_limit_short_of_a_question_still_allows_one():
    # w05 (ceil -> int): 100 questions per second, rounded up: 1.5 questions of 15 ms allow 2, 1 ms allows 1, not 0.
    assert WaysLimit.of(Planner(CATALOG, load_weights(), "auto", time_limit_s=0.015), 100.0) == WaysLimit(
        questions=2, deadline=pytest.approx(100.009))
    assert WaysLimit.of(Planner(CATALOG, load_weights(), "auto", time_limit_s=0.001), 0.0).questions == 1


def test_without_estimates_a_64_gpu_pool_asks_nothing():
    # r13 (``auto`` tried with estimates off): the tables give 64 A100s Qwen3-4B up to 102400, not 131072, which 8
    # H20s train; a token budget of auto changes only estimated plans, so with estimates off nothing is left to try
    # on 64 GPUs (the reason asked there already), and nothing is asked. On 32 A100s the more-nodes question is left.
    h20 = Pool(name="h20", gpu="H20-96GB", nodes=1, gpus_per_node=8)
    job = Job(name="j", model="Qwen3-4B", max_model_len=131072)
    for nodes, may in ((8, False), (4, True)):
        fleet = Fleet(pools=(h20, Pool(name="a100", gpu="A100-80GB", nodes=nodes, gpus_per_node=8)), jobs=(job,))
        asker = Planner(CATALOG, load_weights(), "never")
        options = fleet_options(asker, fleet).options
        assert {option.pool for option in options} == {0}
        assert reasons_may_ask_reach(asker, fleet, pools_with_ways(options)) is may
        assert (asker.reach_work.spent > 0) is may


def test_a_required_job_cut_short_builds_no_placement_and_the_api_names_its_keyword(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # w12 (the cut-short reason's option named as the command's flag): through the API it names time_limit_s.
    # w06 (no early answer where a job that must be placed has no ways): with --minimize nodes every job must be, and
    # some are cut short, so no placement can be found: no placement model is built, no search run.
    _questions_per_second(monkeypatch, 3)
    fleet = load_fleet(_fleet_file(tmp_path), CATALOG)
    cut = solver.place(fleet, catalog=CATALOG, time_limit_s=4, required=["job-0"])  # job-0 is asked first
    reasons = {entry.job: entry.reason for entry in cut.unplaced}
    assert cut.ways_cut_short and {reasons[name] for name in cut.ways_cut_short} == {
        ("no ways to run worked out within the time limit (the jobs of more priority are asked first; raise "
         "time_limit_s)")}

    def unbuilt(*args: object) -> None:
        raise AssertionError("a placement model was built")

    monkeypatch.setattr(solver.cluster.search, "build_placement_model", unbuilt)
    result = solver.place(fleet, catalog=CATALOG, minimize="nodes", time_limit_s=4)
    assert (result.status, result.placements, bool(result.ways_cut_short)) == ("unknown", (), True)
    assert {entry.reason for entry in result.unplaced} == {
        "no placement found within the time limit (raise time_limit_s)"}


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_a_purchase_says_where_the_wall_clock_stopped_its_widening(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # b03 (the purchase's wall_clock_stopped without the widening's): where the wall clock stops the widening (here
    # said so, as the clock of a busy machine would), the purchase names the step after the search's, as a placement
    # does.
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(BUY_FLEET), encoding="utf-8")
    grown = BUY_MODULE.grown_placements

    def stopped(*args: Any) -> Grown:
        return dataclasses.replace(grown(*args), wall_clock_stopped=("widening",))

    monkeypatch.setattr(BUY_MODULE, "grown_placements", stopped)
    purchase = solver.buy_nodes(path, catalog=CATALOG)
    assert (purchase.status, purchase.nodes, purchase.wall_clock_stopped) == ("optimal", 1, ("widening",))


def test_auxiliary_models_gpus_are_not_engines():
    # s08 (the `< size` check dropped) and s09 (engine_num counted on every rollout GPU): of 4 rollout GPUs, 2 go to
    # auxiliary models, which leaves 2 engines of one GPU; where they take all (or more), there is none.
    plan = solver.plan("Qwen3-4B", max_model_len=8192, budget_gpus=4)[0].plans[0]
    model = CATALOG.model("Qwen3-4B")
    assert plan_settings(plan, model, 4, engines=(2, 1)).config["explorer"] == {
        "rollout_model": {"engine_num": 2, "tensor_parallel_size": 1}}
    for rollout in (2, 1):
        with pytest.raises(EngineError) as raised:
            plan_settings(plan, model, rollout, engines=(2, 1))
        assert str(raised.value) == (f"{rollout} rollout GPUs less the 2 of auxiliary models are not whole engines of "
                                     "1 GPU each")


def test_the_cluster_section_comes_between_the_model_and_the_trainer():
    # s02 (the trainer's keys before the cluster's): the settings and the fragment's sections in one order.
    plan = solver.plan("Qwen3-4B", max_model_len=8192, budget_gpus=4)[0].plans[0]
    model = CATALOG.model("Qwen3-4B")
    assert list(plan_settings(plan, model, 4).config) == ["model", "cluster", "explorer", "trainer"]
    sections = [line[:-1] for line in trinity_fragment(plan, model, 4).splitlines() if line[:1].isalpha()]
    assert sections == ["model", "cluster", "explorer", "trainer"]


def test_nodes_past_the_most_gpus_are_refused_without_a_cluster_section():
    # s12 (the nodes' range one past MAX_GPUS): without rollout GPUs no cluster section checks them further.
    plan = solver.plan("Qwen3-4B", max_model_len=8192, budget_gpus=4)[0].plans[0]
    model = CATALOG.model("Qwen3-4B")
    assert plan_settings(plan, model, nodes=MAX_GPUS).config == plan_settings(plan, model).config
    with pytest.raises(QueryError) as raised:
        plan_settings(plan, model, nodes=MAX_GPUS + 1)
    assert str(raised.value) == f"nodes must be from 1 to {MAX_GPUS}, got {MAX_GPUS + 1}"


def test_a_train_batch_the_data_parallel_ranks_do_not_divide_is_refused():
    # s13 (`not unsplit` dropped): 4 GPUs at SP 1 are 4 data-parallel ranks, which divide 8, not 6.
    plan = solver.plan("Qwen3-4B", max_model_len=8192, budget_gpus=4)[0].plans[0]
    model = CATALOG.model("Qwen3-4B")
    assert (plan.gpus, plan.sp) == (4, 1)
    assert plan_settings(plan, model, 0, train_batch_size=8).config["buffer"] == {"train_batch_size": 8}
    with pytest.raises(QueryError) as raised:
        plan_settings(plan, model, 0, train_batch_size=6)
    assert str(raised.value) == ("train_batch_size must be a whole number from 1 to 16777216 that the plan's "
                                 "data-parallel ranks (4 GPUs / SP=1) divide, got 6")


def test_engines_of_no_gpus_run_elsewhere():
    # s14 (engines of 0 GPUs refused as arguments): a config whose engines run elsewhere (tinker, external) gives
    # engines (0, 0): without rollout GPUs that is mode train; with them, an `EngineError` says why.
    plan = solver.plan("Qwen3-4B", max_model_len=8192, budget_gpus=4)[0].plans[0]
    model = CATALOG.model("Qwen3-4B")
    assert plan_settings(plan, model, 0, engines=(0, 0)).config["mode"] == "train"
    with pytest.raises(EngineError) as raised:
        plan_settings(plan, model, 2, engines=(0, 0))
    assert str(raised.value) == ("its rollout engines run elsewhere (engine_type tinker or external) and take none of "
                                 "the 2 rollout GPUs")


def test_a_trainer_across_nodes_takes_whole_ones():
    # s17 (the whole-nodes check dropped): 4 trainer and 8 rollout GPUs on 4 nodes are nodes of 3, which the trainer
    # spans without filling; on 2 nodes of 6 it sits within one.
    plan = solver.plan("Qwen3-4B", max_model_len=8192, budget_gpus=4)[0].plans[0]
    model = CATALOG.model("Qwen3-4B")
    assert plan_settings(plan, model, 8, nodes=2).config["cluster"] == {"node_num": 2, "gpu_per_node": 6}
    with pytest.raises(QueryError) as raised:
        plan_settings(plan, model, 8, nodes=4)
    assert str(raised.value) == "4 GPUs span nodes of 3 (nodes=4) but are not whole nodes"


def test_the_derived_length_caution_floors_a_fraction_and_leaves_past_native_to_its_own(tmp_path: Path):
    # v10 (floor -> ceil): seq_length 8192 under an own linear scaling of 1.1 derives 9011.2: 9012 is past it.
    # v09 (`beyond_native_on_own_scaling` dropped): past the native 32768 the own scaling's words say it, not these.
    config = json.loads((ROOT / "docs" / "examples" / "my-model" / "config.json").read_text(encoding="utf-8"))
    (tmp_path / "config.json").write_text(json.dumps(
        {**config, "seq_length": 8192, "rope_scaling": {"rope_type": "linear", "factor": 1.1}}), encoding="utf-8")
    model = load_model_config(tmp_path)
    assert (model.native_context, model.vllm_length_key, model.vllm_context) == (32768, ("seq_length", 8192), 9011.2)
    assert past_derived_length_words(model, 9011) is None
    assert past_derived_length_words(model, 9012) == (
        "vLLM's rollout refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1 is set, past the 9011 it derives from the "
        "model's config: its seq_length of 8192, the smallest of its length keys")
    assert model.beyond_native_on_own_scaling(40000) and past_derived_length_words(model, 40000) is None


def test_the_keys_only_trinity_06_takes_come_in_the_fragments_order():
    # s20 (the paths sorted): Offload's three flags under trainer, as the fragment writes them.
    plan = solver.plan("Qwen3-32B", max_model_len=32768, budget_gpus=8)[0].plans[0]
    assert plan.setting.offload
    assert plan_settings(plan, CATALOG.model("Qwen3-32B"), 0).trinity_06_keys == (
        ("trainer", "param_offload"), ("trainer", "optimizer_offload"), ("trainer", "offload_policy"))


def _config_problems(config: dict[str, Any]) -> list[tuple[str, str]]:
    """The problems of `config`, with a model section, for Qwen3-8B on 8 GPUs: (code, words) each."""
    mapping = {**config, "model": {"model_path": "Qwen/Qwen3-8B", **config.get("model", {})}}
    return [(problem.code.value, problem.words)
            for problem in trinity_config_problems(mapping, CATALOG.model("8B"), 8)]


REFUSED = "; every Trinity release refuses the config as it loads it (OmegaConf resolves each value then)"


def test_a_reference_into_trainer_config_is_refused_whatever_the_field_name():
    # k03 (the trainer_config exception dropped): max_model_len is a field of Trinity's typed config, which fills a
    # model.max_model_len the config lacks, but not one under trainer.trainer_config (typed Any).
    assert _config_problems({"trainer": {"save_hf_checkpoint": "${model.max_model_len}"}}) == [(
        "unresolved-value", ("cannot check trainer.save_hf_checkpoint: cannot resolve '${model.max_model_len}': the "
                             "config has no model.max_model_len"))]
    assert _config_problems({"trainer": {"save_hf_checkpoint": "${trainer.trainer_config.max_model_len}",
                                         "trainer_config": {}}}) == [(
        "unresolved-value-refused", ("trainer.save_hf_checkpoint: cannot resolve '${trainer.trainer_config."
                                     "max_model_len}': the config has no trainer.trainer_config.max_model_len"
                                     + REFUSED))]


def test_a_reference_above_the_top_is_refused():
    # k17 (climbing above the top not said to resolve to nothing).
    assert _config_problems({"trainer": {"save_hf_checkpoint": "${.....x}"}}) == [(
        "unresolved-value-refused", ("trainer.save_hf_checkpoint: cannot resolve '${.....x}': it climbs above the "
                                     "config's top" + REFUSED))]


def test_the_text_views_take_the_narrowest_and_the_widest_widths():
    # x02, x03 (either end of the width's range refused): 20 and 65536 columns are taken, 19 and 65537 are not.
    # x05 (lines cropped at the width): a line rich does not wrap is printed whole, as on a pipe.
    query = solver.make_query(CATALOG, model="4B", gpu="a100", max_model_len=8192, budget_gpus=2)
    answers = answer_query(query, CATALOG)
    narrow, wide = (solver.answers_text(answers, query, CATALOG, width=width) for width in (20, 65536))
    assert narrow.splitlines()[:2] == ["A100-80GB · Qwen3-4B", "· cheapest plan for"]
    assert "trainer.ulysses_sequence_parallel_size: 1" in narrow.splitlines()
    assert wide.splitlines()[0] == "A100-80GB · Qwen3-4B · cheapest plan for 8192 tokens within 2 GPUs: optimal"
    for width in (19, 65537):
        with pytest.raises(QueryError) as raised:
            solver.answers_text(answers, query, CATALOG, width=width)
        assert str(raised.value) == f"width must be a whole number of columns from 20 to 65536, got {width}"


def test_the_text_views_apply_lines_follow_the_querys_trinity_version():
    # x11 (the view made for no release): for 0.5 the apply block leaves out the trainer-level offload flags (0.6's).
    lines = {}
    for version in (None, "0.5"):
        query = solver.make_query(CATALOG, model="32B", gpu="h100", max_model_len=32768, budget_gpus=8,
                                  trinity_version=version)
        lines[version] = solver.answers_text(answer_query(query, CATALOG), query, CATALOG).splitlines()
    flags = "trainer.{param_offload, optimizer_offload, offload_policy}: true"
    assert flags in lines[None] and flags not in lines["0.5"]
