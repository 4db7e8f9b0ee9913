"""Coverage of session 64's merged code (helper deadcode2): each test reaches a line or branch that no test reached,
by real input, and checks what it does (exit status, words, the search's budget); and the invariant that made
`_reasons`' fallback ("no pool it may use") dead: every job may use at least one pool of its fleet."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pydantic
import pytest
from cluster_api import place
from test_cluster import CATALOG
from test_clusterbuy_s60 import fleet_file
from test_clustersearch_s64 import A100, TWO_14B, reach_questions

import solver.cluster.options
import solver.cluster.reasons
import solver.cluster.search
from solver import plan
from solver.cluster.options import Planner
from solver.query import ConfigProblemCode
from solver.tables import DETERMINISTIC_PER_SECOND, Fleet, Job, Pool, load_fleet
from solver.trinity import ConfigError, anchored_keys, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]

BIG_4090 = {"name": "big", "gpu": "RTX-4090", "nodes": 16, "gpus_per_node": 4, "host_ram_gb": 64}
"""64 RTX 4090s: the most trainer GPUs the planner weighs (`MAX_ESTIMATED_GPUS`), on which Qwen3-14B trains some
length but not 65536 tokens, even with --token-budget auto."""

BOX_4090 = {"name": "box", "gpu": "RTX-4090", "nodes": 1, "gpus_per_node": 4, "host_ram_gb": 64}
"""4 RTX 4090s, on which Qwen3-14B trains no length: the whole-pool question's answer is infeasible."""


class _Searched:
    """What `solver.cluster.search.place` decided before its first stage: whether the reasons may ask whether more
    nodes reach a length (`reasons_may_ask_reach`), the first stage's deterministic time, and the planner."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.decided: list[bool] = []
        self.given: list[float] = []
        self.planners: list[Planner] = []
        may_ask, set_limits = solver.cluster.search.reasons_may_ask_reach, solver.cluster.search._set_limits

        def deciding(planner: Planner, *args: object) -> bool:
            self.planners.append(planner)
            self.decided.append(may_ask(planner, *args))  # type: ignore[arg-type]
            return self.decided[-1]

        def recorded(solver_: object, work: float, deadline: float) -> None:
            self.given.append(work)
            set_limits(solver_, work, deadline)  # type: ignore[arg-type]

        monkeypatch.setattr(solver.cluster.search, "reasons_may_ask_reach", deciding)
        monkeypatch.setattr(solver.cluster.search, "_set_limits", recorded)


def test_a_job_naming_no_pool_of_its_fleet_is_refused_in_code_as_in_a_file():
    # Every job may use a pool of its fleet (at least one pool; a job's pool one of them), so `_reasons` always
    # gives one reason per pool it asks: `why_no_option` is asked for a job with no way at all (every pool it may
    # use), and `_elsewhere` asks only where another pool is left. Its fallback words ("no pool it may use") were
    # dead, and are gone.
    pool = Pool(name="a", gpu="A100-80GB", nodes=1, gpus_per_node=8)
    with pytest.raises(pydantic.ValidationError) as raised:
        Fleet(pools=(pool,), jobs=(Job(name="j", model="Qwen3-4B", max_model_len=8192, pool="b"),))
    assert "job j, pool: no pool named 'b' (pools: a)" in str(raised.value)
    with pytest.raises(pydantic.ValidationError) as raised:
        Fleet(pools=(), jobs=(Job(name="j", model="Qwen3-4B", max_model_len=8192),))
    assert "pools\n  Tuple should have at least 1 item" in str(raised.value)


def test_a_job_without_a_way_anywhere_has_a_reason_for_its_one_pool(tmp_path: Path):
    # The reason `_reasons` gives a job with no way is its pools' reasons joined: never empty.
    instance = {"pools": [A100, BOX_4090],
                "jobs": [{"name": "z", "model": "Qwen3-14B", "max_model_len": 65536, "pool": "box"}]}
    [unplaced] = place(load_fleet(fleet_file(instance, tmp_path), CATALOG), catalog=CATALOG).unplaced
    assert (unplaced.job, unplaced.reason_code, [pool.pool for pool in unplaced.pools]) == ("z", "no-way-to-run",
                                                                                            ["box"])
    assert unplaced.reason.startswith("box: ") and unplaced.reason_for_several is None


def test_token_budget_auto_on_a_pool_of_the_most_gpus_asks_nothing_and_keeps_the_full_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # y is left out of a100; on big it has no way (65536 tokens beyond 62 RTX 4090s' reach beside its rollout). With
    # --token-budget auto there is no question left for its reason to ask (`_reach_budgets`: the pool's 64 GPUs are
    # the most the planner weighs, asked already, and auto is the run's own), so the search keeps nothing back.
    # The jobs under Trinity 0.5.1, which loads the untied Qwen3-14B on rank 0 alone: with no release named each of
    # a 4090 node's 4 ranks loads it (s84), 220.1 GiB, more than big's 64, where it trains no length at all.
    searched = _Searched(monkeypatch)
    jobs = [{**job, "trinity_version": "0.5.1"} for job in TWO_14B]
    fleet = load_fleet(fleet_file({"pools": [A100, BIG_4090], "jobs": jobs}, tmp_path), CATALOG)
    result = place(fleet, catalog=CATALOG, time_limit_s=10, token_budget="auto")
    assert searched.decided == [False] and searched.planners[0].reach_work.spent == 0.0
    assert searched.given[0] == 0.6 * DETERMINISTIC_PER_SECOND * 10
    [unplaced] = result.unplaced
    assert [(pool.pool, pool.reason_code, pool.plan_reason_code, pool.more_nodes_reach) for pool in unplaced.pools] == [
        ("a100", "no-room", None, None), ("big", "no-plan", "length-beyond-reach", False)]
    # With Trinity's default budget, auto is left to ask: the search keeps the questions' share, and the reason asks.
    result = place(fleet, catalog=CATALOG, time_limit_s=10)
    assert searched.decided[1] is True and searched.planners[1].reach_work.spent > 0
    assert "with --token-budget auto: an SP group stays within one node" in result.unplaced[0].reason


def test_a_question_left_unasked_for_want_of_deterministic_time_counts_as_may(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # On box, Qwen3-14B trains no length, asked on the questions' deterministic time: the reasons will not ask there,
    # and the search keeps nothing. With none of that time to ask on, the question is not asked, and counts as may.
    searched = _Searched(monkeypatch)
    asked = reach_questions(monkeypatch)
    fleet = load_fleet(fleet_file({"pools": [A100, BOX_4090], "jobs": TWO_14B}, tmp_path), CATALOG)
    place(fleet, catalog=CATALOG, time_limit_s=10)
    assert searched.decided == [False] and asked == [2]
    monkeypatch.setattr(solver.cluster.options, "REACH_SHARE", 0.0)
    place(fleet, catalog=CATALOG, time_limit_s=10)
    assert searched.decided[1] is True and searched.planners[1].reach_work.spent == 0.0 and asked == [2]


def test_minimize_nodes_with_every_job_required_names_no_job_to_buy_for(cli: Cli, tmp_path: Path):
    # --minimize nodes places every job: where the file marks them all required, --buy buys for every one already,
    # so the note's command names none (`--required` with no names would be refused).
    path = tmp_path / "fleet.yaml"
    path.write_text("pools: [{name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}]\n"
                    "jobs: [{name: x, model: Qwen3-14B, max_model_len: 65536, rollout_gpus: 2, required: true},\n"
                    "       {name: y, model: Qwen3-14B, max_model_len: 65536, rollout_gpus: 2, required: true}]\n",
                    encoding="utf-8")
    tail = "names the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n"
    status, out, err = cli("cluster", str(path), "--minimize", "nodes")
    assert (status, out.splitlines()[0]) == (1, "status: infeasible")
    assert err == f"solve cluster: note: to place every job: solve cluster {path} --buy {tail}"
    status, _, err = cli("cluster", str(path))
    assert status == 1 and err == f"solve cluster: note: to place the required jobs: solve cluster {path} --buy {tail}"


def test_a_rope_scaling_that_is_no_mapping_over_a_models_own_is_refused_and_said_to_replace_it():
    # `_check_rope_scaling`'s branch for a model.rope_scaling given over the model's own scaling that is no mapping
    # (a mapping is judged by `_check_given_over_own`): Trinity refuses the value whatever the length, and it would
    # replace Llama 3.1's llama3 scaling. The first line names the value given (it said "(None)", its RoPE type).
    llama = CATALOG.model("llama-3.1-8b")
    for value in ("yarn", 2.0):
        problems = trinity_config_problems({"model": {"max_model_len": 4096, "rope_scaling": value}}, llama, 8)
        assert [(problem.code, problem.words) for problem in problems] == [
            (ConfigProblemCode.ROPE_SCALING_REPLACES_OWN,
             f"model.rope_scaling ({value!r}) would replace Llama-3.1-8B's own llama3 RoPE scaling: remove it"),
            (ConfigProblemCode.ROPE_SCALING_WRONG, f"model.rope_scaling must be a mapping, got {value!r}: remove it")]


def test_anchored_keys_refuses_a_tag_that_only_ruamels_round_trip_reads_in_trinitys_words():
    # patch.py's `anchored_keys`: where Trinity's reader refuses the text and ruamel's round trip reads it (a tag of
    # one's own), the refusal is the reader's own, raised again.
    best = plan("4B", max_model_len=8192, gpu="a100")[0].best
    assert best is not None
    with pytest.raises(ConfigError) as refused:
        anchored_keys("a: !custom 1\n", best, CATALOG.model("4B"), name="c.yaml")
    assert str(refused.value) == ("c.yaml: line 1: malformed YAML: could not determine a constructor for the tag "
                                  "'!custom'")
