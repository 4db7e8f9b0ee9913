"""The brute-force cluster reference (tests/cluster_reference.py), checked against instances solved by hand
from the A100-80GB tables (tables/feasibility/a100-80gb.yaml) and the default cost weights
(offload 1.0, sp 0.1, env 0.01): cost = (1/n)(1 + o)(1 + 0.1(s - 1))(1 + 0.01e), and a job's cost in the
objective is round(cost * 10000)."""

from __future__ import annotations

import copy
import itertools
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_api import buy
from cluster_reference import (
    best_placement,
    best_value,
    best_value_naive,
    check_placements,
    job_candidates,
    random_instance,
    value_of,
)
from conftest import reference_problems
from reference import enumerate_plans
from test_cluster import solved

import solver.cluster
from solver.tables import load_catalog

CATALOG = load_catalog()


def pool(name="a100", gpu="a100", nodes=1, gpus_per_node=8):
    return {"name": name, "gpu": gpu, "nodes": nodes, "gpus_per_node": gpus_per_node}


def job(name, model, length, rollout=0, priority=None, pool_name=None):
    spec = {"name": name, "model": model, "max_model_len": length, "rollout_gpus": rollout}
    if priority is not None:
        spec["priority"] = priority
    if pool_name is not None:
        spec["pool"] = pool_name
    return spec


def plan_of(model, n, length, sp=None, gpu="A100-80GB"):
    """The cheapest plan with exactly n GPUs at the length (or with the given SP)."""
    plans = enumerate_plans(
        CATALOG, gpu=gpu, model=model, objective="cheapest", budget_gpus=n, exact=True, max_model_len=length
    )
    return next(p for p in plans if sp is None or p["sp"] == sp)


def placed(name, pool_name, nodes, n, rollout, plan, gpus=None):
    entry = {"job": name, "pool": pool_name, "nodes": nodes, "trainer_gpus": n, "rollout_gpus": rollout,
             "plan": {**plan, "nodes": len(nodes), "rollout_gpus": rollout}}  # the placement's layout
    return entry if gpus is None else {**entry, "gpu_indexes": gpus}


def result(placements, unplaced=()):
    return {
        "status": "optimal",
        "objective": 0,
        "bound": 0,
        "placements": placements,
        "unplaced": [{"job": name, "reason": "x"} for name in unplaced],
    }


def assert_optimum(instance, want, minimize_nodes=False):
    """best_value is `want`, the naive search agrees, and best_placement is valid and worth `want`."""
    assert best_value(CATALOG, instance, minimize_nodes) == want
    assert best_value_naive(CATALOG, instance, minimize_nodes) == want
    witness = best_placement(CATALOG, instance, minimize_nodes)
    if want is None:
        assert witness is None
        return None
    assert check_placements(CATALOG, instance, witness, minimize_nodes=minimize_nodes) == []
    assert value_of(CATALOG, instance, witness, minimize_nodes) == want
    return witness


# --- one node of 8 A100s: which jobs fit together ----------------------------------------------------------
#
# Qwen3-4B at 32768, rollout 2 (n + 2 <= 8, so n <= 6, one node):
#   n=1: the 1-GPU table's 32768 row is '-' and it is the last row: no plan.
#   n=2: 'Env + SP=2'  cost (1/2)(1.1)(1.01) = 0.5555 -> 5555, uses 4 GPUs
#   n=4: 'SP=2'        cost (1/4)(1.1)       = 0.275  -> 2750, uses 6 GPUs
#   n=6: 'SP=2'        cost (1/6)(1.1)       = 0.1833 -> 1833, uses 8 GPUs
# Qwen3-8B at 32768, rollout 2:
#   n=1: '-': no plan.
#   n=2: 'Env + Offload + SP=2'  cost (1/2)(2)(1.1)(1.01) = 1.111  -> 11110, uses 4 GPUs
#   n=4: 'SP=4'                  cost (1/4)(1.3)          = 0.325  -> 3250,  uses 6 GPUs
#   n=6: 'Env + SP=2'            cost (1/6)(1.1)(1.01)    = 0.1852 -> 1852,  uses 8 GPUs
# Together they need 4 + 4 = 8 GPUs at least: only n=2 and n=2 fit. Priority 3 + 1 = 4 beats 4B alone (3):
# optimum (4, 0, 5555 + 11110) = (4, 0, 16665).

FOUR_B = job("math-4b", "Qwen3-4B", 32768, rollout=2, priority=3)
EIGHT_B = job("code-8b", "8B", 32768, rollout=2, priority=1)


def test_single_job_candidates_match_the_tables():
    got = {
        c["n"]: (c["plan"]["env"], c["plan"]["offload"], c["plan"]["sp"], c["layout"], c["cost"])
        for c in job_candidates(CATALOG, FOUR_B, pool())
    }
    assert got == {
        2: (True, False, 2, ("one", 4), 5555),
        4: (False, False, 2, ("one", 6), 2750),
        6: (False, False, 2, ("one", 8), 1833),
    }
    got = {
        c["n"]: (c["plan"]["env"], c["plan"]["offload"], c["plan"]["sp"], c["layout"], c["cost"])
        for c in job_candidates(CATALOG, EIGHT_B, pool())
    }
    assert got == {
        2: (True, True, 2, ("one", 4), 11110),
        4: (False, False, 4, ("one", 6), 3250),
        6: (True, False, 2, ("one", 8), 1852),
    }


def test_two_jobs_share_one_node_on_two_gpus_each():
    instance = {"pools": [pool()], "jobs": [FOUR_B, EIGHT_B]}
    witness = assert_optimum(instance, (4, 0, 16665))
    assert sorted((p["job"], p["trainer_gpus"], p["rollout_gpus"]) for p in witness["placements"]) == [
        ("code-8b", 2, 2),
        ("math-4b", 2, 2),
    ]


def test_more_rollout_leaves_room_for_one_job_only():
    # 8B with rollout 4 uses at least 2 + 4 = 6 GPUs, 4B at least 4: 10 > 8, so one job only; the 4B job has
    # the higher priority and alone takes n=6 (cheapest, 6 + 2 = 8 GPUs): (3, 0, 1833).
    instance = {"pools": [pool()], "jobs": [FOUR_B, {**EIGHT_B, "rollout_gpus": 4}]}
    assert_optimum(instance, (3, 0, 1833))


def test_minimize_nodes_packs_both_jobs_on_one_node():
    # Two nodes of 8: by priority both jobs go on their own node at n=6: (4, 0, 1833 + 1852) = (4, 0, 3685).
    # Minimising nodes: both fit one node only at n=2 each: (1 node, 0, 16665).
    instance = {"pools": [pool(nodes=2)], "jobs": [FOUR_B, EIGHT_B]}
    assert_optimum(instance, (4, 0, 3685))
    assert_optimum(instance, (1, 0, 16665), minimize_nodes=True)


# --- whole nodes -------------------------------------------------------------------------------------------


def test_whole_node_job_with_rollout_on_a_second_node():
    # Pool of 2 nodes x 2 GPUs; Qwen3-0.6B at 8192, rollout 2.
    #   n=1: 1 + 2 > 2 and 1 % 2 != 0: not allowed.
    #   n=2: 2 + 2 > 2, 2 % 2 == 0: k = 2/2 + ceil(2/2) = 2 whole nodes; 'vanilla' cost 1/2 -> 5000;
    #        rollout gets 2*2 - 2 = 2 GPUs.
    #   n=4: k = 2 + 1 = 3 > 2 nodes; n=6: k = 4: no.
    # Optimum (1, 0, 5000); minimize nodes: 2 nodes.
    instance = {"pools": [pool(nodes=2, gpus_per_node=2)], "jobs": [job("small", "0.6B", 8192, rollout=2)]}
    witness = assert_optimum(instance, (1, 0, 5000))
    assert witness["placements"][0]["nodes"] == [0, 1]
    assert witness["placements"][0]["rollout_gpus"] == 2
    assert_optimum(instance, (2, 0, 5000), minimize_nodes=True)


def test_rollout_rounds_up_to_a_whole_node():
    # Same pool, rollout 1: n=2 takes k = 1 + ceil(1/2) = 2 nodes and rollout gets 2*2 - 2 = 2 GPUs (not 1).
    instance = {"pools": [pool(nodes=2, gpus_per_node=2)], "jobs": [job("small", "0.6B", 8192, rollout=1)]}
    witness = assert_optimum(instance, (1, 0, 5000))
    assert witness["placements"][0]["rollout_gpus"] == 2


def test_trainer_over_two_nodes_without_rollout():
    # Pool 2 x 2, 0.6B at 8192, rollout 0: n=1 one node (10000), n=2 one node (5000), n=4 two whole nodes
    # ('vanilla', SP=1 divides 2; 1/4 -> 2500), n=6 needs 3 nodes. Optimum (1, 0, 2500).
    # Minimising nodes: one node at n=2: (1, 0, 5000).
    instance = {"pools": [pool(nodes=2, gpus_per_node=2)], "jobs": [job("small", "0.6B", 8192)]}
    witness = assert_optimum(instance, (1, 0, 2500))
    assert witness["placements"][0]["nodes"] == [0, 1]
    assert_optimum(instance, (1, 0, 5000), minimize_nodes=True)


def test_sp_must_divide_the_node_when_the_trainer_spans_nodes():
    # 0.6B at 61440, rollout 0. The 4-GPU cells at 61440 and beyond are all SP=4, cost (1/4)(1.3) = 0.325
    # -> 3250. On 2 GPUs: 'Env + Offload + SP=2', (1/2)(2)(1.1)(1.01) = 1.111 -> 11110; that cell also
    # vouches for the same setting on 4 GPUs (what trains on fewer GPUs trains on more): 0.5555 -> 5555.
    # 1 GPU: no row that long. 6 GPUs: 'Env + SP=2' at 61440, but needs 3 nodes of 2.
    # Pool 2 x 2: n=4 spans both nodes and SP=4 does not divide 2, so n=4 takes SP=2: (1, 0, 5555).
    spanning = {"pools": [pool(nodes=2, gpus_per_node=2)], "jobs": [job("long", "0.6B", 61440)]}
    assert_optimum(spanning, (1, 0, 5555))
    # Pool 1 x 4: n=4 sits on one node, SP=4 is fine: (1, 0, 3250).
    one_node = {"pools": [pool(nodes=1, gpus_per_node=4)], "jobs": [job("long", "0.6B", 61440)]}
    assert_optimum(one_node, (1, 0, 3250))


# --- at_least ----------------------------------------------------------------------------------------------


def test_at_least_job_gains_length():
    # 4B at_least 32768, rollout 2, one node of 8 A100s (n <= 6). The longest: n=4 reaches 102400 with
    # 'Env + Offload + SP=4' (112640 is '-'); n=2 and n=6 stop at 51200, n=1 at 28672.
    # Gain (102400 - 32768) // 1024 = 68; cost (1/4)(2)(1.3)(1.01) = 0.6565 -> 6565: (1, 68, 6565).
    instance = {"pools": [pool()], "jobs": [job("long-4b", "4B", {"at_least": 32768}, rollout=2)]}
    witness = assert_optimum(instance, (1, 68, 6565))
    plan = witness["placements"][0]["plan"]
    assert (plan["gpus"], plan["max_model_len"], plan["sp"], plan["offload"]) == (4, 102400, 4, True)


def test_at_least_between_rows():
    # at_least 100000: candidates 100000 itself and the row lengths above it. 100000 and 102400 both have the
    # n=4 plan 'Env + Offload + SP=4' (row 102400); 102400 gains (102400 - 100000) // 1024 = 2: (1, 2, 6565).
    instance = {"pools": [pool()], "jobs": [job("long-4b", "4B", {"at_least": 100000}, rollout=2)]}
    assert_optimum(instance, (1, 2, 6565))


def test_at_least_trades_gain_against_priority_only_after_priority():
    # The 4B at_least job (priority 1) and an 8B job at 32768 (priority 2), both rollout 2, one node of 8.
    # Both fit only at n=2 each (4 + 4 GPUs). 4B on 2 GPUs reaches 51200 ('Env + Offload + SP=2', gain
    # (51200 - 32768) // 1024 = 18, cost 1.111 -> 11110); 8B n=2 costs 11110. Priority 3 beats the 4B job
    # alone with gain 68: (3, 18, 22220).
    instance = {
        "pools": [pool()],
        "jobs": [
            job("long-4b", "4B", {"at_least": 32768}, rollout=2, priority=1),
            job("code-8b", "8B", 32768, rollout=2, priority=2),
        ],
    }
    assert_optimum(instance, (3, 18, 22220))


# --- nothing fits ------------------------------------------------------------------------------------------


def test_nothing_fits():
    # 14B at 131072: no A100 table reaches it. 0.6B with rollout 8 on one node of 8: n + 8 > 8 and no
    # documented n (1, 2, 4, 6) is a multiple of 8. Nothing is placed: (0, 0, 0); minimise nodes: None.
    instance = {"pools": [pool()], "jobs": [job("huge", "14B", 131072), job("greedy", "0.6B", 4096, rollout=8)]}
    assert_optimum(instance, (0, 0, 0))
    assert_optimum(instance, None, minimize_nodes=True)


def test_pool_pin_is_respected():
    # Two pools; the job pins the 2 x 2 pool, so it cannot use the roomy 8-GPU node: same as the whole-node
    # case above, (1, 0, 5000) on two nodes of pool "small".
    instance = {
        "pools": [pool(), pool(name="small", nodes=2, gpus_per_node=2)],
        "jobs": [job("small", "0.6B", 8192, rollout=2, pool_name="small")],
    }
    witness = assert_optimum(instance, (1, 0, 5000))
    assert witness["placements"][0]["pool"] == "small"
    with pytest.raises(ValueError, match="job 'x' names unknown pool 'nope'"):
        best_value(CATALOG, {"pools": [pool()], "jobs": [job("x", "4B", 4096, pool_name="nope")]})


# --- check_placements --------------------------------------------------------------------------------------

TWO_JOBS = {"pools": [pool(nodes=2)], "jobs": [FOUR_B, EIGHT_B]}


def good_two_jobs():
    return result(
        [
            placed("math-4b", "a100", [0], 2, 2, plan_of("Qwen3-4B", 2, 32768)),
            placed("code-8b", "a100", [0], 2, 2, plan_of("Qwen3-8B", 2, 32768)),
        ]
    )


def test_check_accepts_a_valid_result():
    assert check_placements(CATALOG, TWO_JOBS, good_two_jobs()) == []
    assert value_of(CATALOG, TWO_JOBS, good_two_jobs()) == (4, 0, 16665)
    assert value_of(CATALOG, TWO_JOBS, good_two_jobs(), minimize_nodes=True) == (1, 0, 16665)


def test_check_catches_over_capacity():
    over = result(
        [
            placed("math-4b", "a100", [0], 6, 2, plan_of("Qwen3-4B", 6, 32768)),
            placed("code-8b", "a100", [0], 2, 2, plan_of("Qwen3-8B", 2, 32768)),
        ]
    )
    problems = check_placements(CATALOG, TWO_JOBS, over)
    assert len(problems) == 1 and "12 GPUs" in problems[0] and "over its 8" in problems[0]


def test_check_catches_a_job_twice_or_missing():
    twice = good_two_jobs()
    twice["placements"][1]["job"] = "math-4b"
    problems = check_placements(CATALOG, TWO_JOBS, twice)
    assert any("'math-4b' appears 2 times" in p for p in problems)
    assert any("'code-8b' is neither placed nor unplaced" in p for p in problems)
    both = good_two_jobs()
    both["unplaced"] = [{"job": "code-8b", "reason": "x"}]
    assert any("'code-8b' appears 2 times" in p for p in check_placements(CATALOG, TWO_JOBS, both))
    missing = result([], unplaced=["math-4b"])
    assert check_placements(CATALOG, TWO_JOBS, missing) == ["job 'code-8b' is neither placed nor unplaced"]
    # unplaced is fine by priority, not when minimising nodes
    partial = result([placed("math-4b", "a100", [0], 2, 2, plan_of("Qwen3-4B", 2, 32768))], unplaced=["code-8b"])
    assert check_placements(CATALOG, TWO_JOBS, partial) == []
    assert check_placements(CATALOG, TWO_JOBS, partial, minimize_nodes=True) != []
    with pytest.raises(ValueError, match=r"minimize nodes, but jobs are unplaced: \['code-8b'\]"):
        value_of(CATALOG, TWO_JOBS, partial, minimize_nodes=True)


def test_check_catches_a_plan_the_tables_do_not_allow():
    # 4B at 32768 on 2 GPUs with SP=2 but without Env: the 2-GPU cells at 32768 and beyond all need Env.
    bad = good_two_jobs()
    bad["placements"][0]["plan"]["env"] = False
    problems = check_placements(CATALOG, TWO_JOBS, bad)
    assert any("plan: not feasible" in p for p in problems)
    # trainer_gpus and the plan's gpus disagree
    bad = good_two_jobs()
    bad["placements"][0]["trainer_gpus"] = 4
    assert any("plan gpus=2 but trainer_gpus=4" in p for p in check_placements(CATALOG, TWO_JOBS, bad))
    # the wrong length for an exact job
    bad = good_two_jobs()
    bad["placements"][0]["plan"] = plan_of("Qwen3-4B", 2, 16384)
    assert any("asks for exactly 32768" in p for p in check_placements(CATALOG, TWO_JOBS, bad))
    # a pinned job in another pool
    pinned = copy.deepcopy(TWO_JOBS)
    pinned["pools"].append(pool(name="other", nodes=1))
    pinned["jobs"][0]["pool"] = "other"
    assert any("asks for pool 'other'" in p for p in check_placements(CATALOG, pinned, good_two_jobs()))


def test_check_unused_gpus_is_strict_unless_told():
    bad = good_two_jobs()
    bad["placements"][0]["plan"]["unused_gpus"] = 2
    assert check_placements(CATALOG, TWO_JOBS, bad) == ["job 'math-4b': plan: unused_gpus=2, expected 0"]
    assert check_placements(CATALOG, TWO_JOBS, bad, ignore_unused_gpus=True) == []


def test_check_catches_at_least_below_its_minimum():
    instance = {"pools": [pool()], "jobs": [job("long-4b", "4B", {"at_least": 32768}, rollout=2)]}
    short = result([placed("long-4b", "a100", [0], 2, 2, plan_of("Qwen3-4B", 2, 16384))])
    assert any("below at_least 32768" in p for p in check_placements(CATALOG, instance, short))
    longer = result([placed("long-4b", "a100", [0], 2, 2, plan_of("Qwen3-4B", 2, 51200))])
    assert check_placements(CATALOG, instance, longer) == []
    assert value_of(CATALOG, instance, longer) == (1, 18, 11110)


SMALL_POOL = {"pools": [pool(nodes=2, gpus_per_node=2)], "jobs": [job("small", "0.6B", 8192, rollout=1)]}


def test_check_catches_the_wrong_node_count_and_rollout():
    good = result([placed("small", "a100", [0, 1], 2, 2, plan_of("Qwen3-0.6B", 2, 8192))])
    assert check_placements(CATALOG, SMALL_POOL, good) == []
    one_node = result([placed("small", "a100", [0], 2, 2, plan_of("Qwen3-0.6B", 2, 8192))])
    assert any("takes 1 whole nodes, expected 2" in p for p in check_placements(CATALOG, SMALL_POOL, one_node))
    rollout = result([placed("small", "a100", [0, 1], 2, 1, plan_of("Qwen3-0.6B", 2, 8192))])
    assert check_placements(CATALOG, SMALL_POOL, rollout) == [
        "job 'small': rollout_gpus=1, expected 2 (2 nodes x 2 - 2)"
    ]
    # the plan's layout is the placement's
    layout = result([placed("small", "a100", [0, 1], 2, 2, plan_of("Qwen3-0.6B", 2, 8192))])
    layout["placements"][0]["plan"]["nodes"] = 1
    assert check_placements(CATALOG, SMALL_POOL, layout) == ["job 'small': plan nodes/rollout_gpus 1/2, expected 2/2"]
    # a one-node job must report its own rollout GPUs
    wrong = good_two_jobs()
    wrong["placements"][0]["rollout_gpus"] = wrong["placements"][0]["plan"]["rollout_gpus"] = 6
    assert check_placements(CATALOG, TWO_JOBS, wrong) == ["job 'math-4b': rollout_gpus=6, expected 2"]
    # 1 trainer GPU + 1 rollout fits one node: two nodes is wrong
    split = {"pools": [pool(nodes=2, gpus_per_node=2)], "jobs": [job("tiny", "0.6B", 8192, rollout=1)]}
    spread = result([placed("tiny", "a100", [0, 1], 1, 1, plan_of("Qwen3-0.6B", 1, 8192))])
    assert any("fit one node but it is on 2 nodes" in p for p in check_placements(CATALOG, split, spread))


def test_check_catches_bad_node_indexes_and_shared_whole_nodes():
    out = result([placed("small", "a100", [1, 2], 2, 2, plan_of("Qwen3-0.6B", 2, 8192))])
    assert any("node 2 is outside" in p for p in check_placements(CATALOG, SMALL_POOL, out))
    dup = result([placed("small", "a100", [0, 0], 2, 2, plan_of("Qwen3-0.6B", 2, 8192))])
    assert any("listed twice" in p for p in check_placements(CATALOG, SMALL_POOL, dup))
    shared = {
        "pools": [pool(nodes=2, gpus_per_node=2)],
        "jobs": [job("small", "0.6B", 8192, rollout=1), job("tiny", "0.6B", 8192)],
    }
    both = result(
        [
            placed("small", "a100", [0, 1], 2, 2, plan_of("Qwen3-0.6B", 2, 8192)),
            placed("tiny", "a100", [1], 1, 0, plan_of("Qwen3-0.6B", 1, 8192)),
        ]
    )
    assert check_placements(CATALOG, shared, both) == [
        "pool 'a100' node 1: taken whole by 'small' but used by ['small', 'tiny']"
    ]


def test_check_catches_sp_spanning_nodes_and_impossible_layouts():
    spanning = {"pools": [pool(nodes=2, gpus_per_node=2)], "jobs": [job("long", "0.6B", 61440)]}
    # (the reference's plan is on nodes of 8: its trainer_nodes made right for nodes of 2)
    sp4 = result([placed("long", "a100", [0, 1], 4, 0, {**plan_of("Qwen3-0.6B", 4, 61440, sp=4), "trainer_nodes": 2})])
    problems = check_placements(CATALOG, spanning, sp4)
    spanning_sp = [problem for problem in problems if "SP=4 spans nodes" in problem]  # the plan's and the layout's
    # and the caution a trainer across nodes no fast fabric is said to join carries, which the plan lacks (s73)
    assert len(spanning_sp) == 2 and problems == [spanning_sp[0], (
        "job 'long': a trainer-spans-nodes caution missing (4 trainer GPUs on nodes of 2, node_interconnect None)"),
        spanning_sp[1]]
    # 6 trainer GPUs on nodes of 4: neither one node nor whole nodes
    odd = {"pools": [pool(nodes=2, gpus_per_node=4)], "jobs": [job("odd", "0.6B", 8192)]}
    six = result([placed("odd", "a100", [0, 1], 6, 0, plan_of("Qwen3-0.6B", 6, 8192))])
    assert any("are not whole nodes" in p for p in check_placements(CATALOG, odd, six))


# --- random instances: the footprint shortcut and the witness ------------------------------------------------


def test_random_instances_agree_with_the_naive_search_and_their_witness():
    rng = random.Random(20240607)
    for _ in range(30):
        instance = random_instance(rng)
        assert len(instance["jobs"]) <= 4 and sum(p["nodes"] for p in instance["pools"]) <= 3
        for minimize_nodes, estimates in itertools.product((False, True), (False, True)):
            want = best_value(CATALOG, instance, minimize_nodes, estimates)
            assert best_value_naive(CATALOG, instance, minimize_nodes, estimates) == want, instance
            witness = best_placement(CATALOG, instance, minimize_nodes, estimates)
            if want is None:
                assert minimize_nodes and witness is None
                continue
            assert check_placements(CATALOG, instance, witness, minimize_nodes=minimize_nodes,
                                    estimates=estimates) == [], instance
            assert value_of(CATALOG, instance, witness, minimize_nodes) == want


def test_check_catches_gpu_indexes_that_overlap_or_miscount():
    instance = {"pools": [pool()], "jobs": [FOUR_B, EIGHT_B]}
    four, eight = plan_of("Qwen3-4B", 2, 32768), plan_of("Qwen3-8B", 2, 32768)
    good = result([placed("math-4b", "a100", [0], 2, 2, four, [0, 1, 2, 3]),
                   placed("code-8b", "a100", [0], 2, 2, eight, [4, 5, 6, 7])])
    assert check_placements(CATALOG, instance, good) == []
    overlap = result([placed("math-4b", "a100", [0], 2, 2, four, [0, 1, 2, 3]),
                      placed("code-8b", "a100", [0], 2, 2, eight, [3, 4, 5, 6])])
    assert check_placements(CATALOG, instance, overlap) == ["job 'code-8b': GPU 3 of node 0 is also 'math-4b''s"]
    short = result([placed("math-4b", "a100", [0], 2, 2, four, [0, 1, 8])], unplaced=["code-8b"])
    assert check_placements(CATALOG, instance, short) == [
        "job 'math-4b': gpu_indexes=[0, 1, 8], expected 4 distinct GPUs of 0..7"]


def test_check_counts_a_dpo_job_at_trinitys_default_budget_and_says_dpo(tmp_path: Path):
    # Qwen3-8B at 65536 tokens on a node of 2 H100s: under --token-budget auto a job not DPO is placed on a lowered
    # budget of 50176 tokens per GPU, which a DPO job's actor never reads (docs/cluster.md, `dpo: true`): that
    # placement is wrong for a DPO job. A DPO job's plan is a plain one at Trinity's default budget that says dpo, so
    # checked as a job not DPO it is wrong (the memory figures' dpo).
    h100 = {"name": "h100", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 2}
    grpo = {"name": "d", "model": "Qwen3-8B", "max_model_len": 65536, "rollout_gpus": 0}
    lowered = solved({"pools": [h100], "jobs": [grpo]}, tmp_path, token_budget="auto")
    assert lowered["placements"][0]["plan"]["max_token_len_per_gpu"] == 50176
    problems = check_placements(CATALOG, {"pools": [h100], "jobs": [{**grpo, "dpo": True}]}, lowered, estimates=True,
                                token_budget="auto")
    assert "job 'd': plan: max_token_len_per_gpu=50176, expected 65536" in problems, problems
    short = {**grpo, "max_model_len": 8192, "dpo": True}
    placed_dpo = solved({"pools": [h100], "jobs": [short]}, tmp_path, token_budget="auto")
    plan = placed_dpo["placements"][0]["plan"]
    assert (plan["dpo"], plan["max_token_len_per_gpu"]) == (True, 16384 // plan["sp"])
    [problem] = check_placements(CATALOG, {"pools": [h100], "jobs": [{**short, "dpo": False}]}, placed_dpo,
                                 estimates=True)
    assert "'dpo': True" in problem and "'dpo': False" in problem, problem


def kept_calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    """The (fleet, planner, result) of each call of `solver.cluster`'s `name` (``place`` or ``buy``: the hook's, which
    checks it too) while the test runs, in order."""
    asked: list[Any] = []
    called = getattr(solver.cluster, name)

    def kept(fleet: Any, planner: Any, **options: Any) -> Any:
        result = called(fleet, planner, **options)
        asked.append((fleet, planner, result))
        return result

    monkeypatch.setattr(solver.cluster, name, kept)
    return asked


def test_a_purchases_placement_is_checked_on_the_pools_as_bought(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # Two Qwen3-8B jobs of at least 6 GPUs each on one node of 8 A100s: the purchase buys a node, and places the
    # second job there (node 1), which the reference checks on the pool as bought (conftest's `reference_problems`);
    # on the pool as it was, node 1 is outside it.
    asked = kept_calls(monkeypatch, "buy")
    two = {"pools": [pool(nodes=1)], "jobs": [job("a", "Qwen3-8B", 32768, rollout=4),
                                              job("b", "Qwen3-8B", 32768, rollout=4)]}
    (tmp_path / "fleet.yaml").write_text(yaml.safe_dump(two), encoding="utf-8")
    answer = buy(tmp_path / "fleet.yaml")
    assert (answer.nodes, sorted(node for placement in answer.placements for node in placement.nodes)) == (1, [0, 1])
    [(fleet, planner, result)] = asked
    assert reference_problems(fleet, planner, result, False) == []
    [as_was] = [pool.model_copy(update={"nodes_after": 1}) for pool in result.pools]
    problems = reference_problems(fleet, planner, result.model_copy(update={"pools": (as_was,)}), False)
    assert problems and all("node 1 is outside pool 'a100'" in problem for problem in problems), problems


def test_the_check_counts_model_configs_of_other_types_past_their_native_context(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # phi-4 (model_type phi3, advised no YaRN) at 32768 tokens, past its native 16384: no YaRN written, the
    # past-native-no-yarn caution; Yi-1.5-9B (llama) at 5000, past its 4096: YaRN no one validated (its data-parallel
    # ranks uneven). The reference counts both (conftest's `reference_problems` is a list, not None) and refutes YaRN
    # written for phi-4.
    asked = kept_calls(monkeypatch, "place")
    configs = Path(__file__).parent / "data" / "hf-configs"
    jobs = [{"name": name, "model_config": str(configs / config), "max_model_len": length}
            for name, config, length in (("phi", "phi-4.json", 32768), ("yi", "Yi-1.5-9B.json", 5000))]
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(yaml.safe_dump({"pools": [pool(gpu="h100")], "jobs": jobs}), encoding="utf-8")
    answer = solver.place(fleet_file)
    plans = {placement.job: placement.plan for placement in answer.placements}
    assert [(job, plan.max_model_len, plan.rope_scaling_factor, [code.value for code in plan.caution_codes])
            for job, plan in sorted(plans.items())] == [
        ("phi", 32768, None, ["past-native-no-yarn"]),
        ("yi", 5000, 5000 / 4096, ["yarn-unvalidated-model", "uneven-data-parallel"])]
    [(fleet, planner, result)] = asked
    assert reference_problems(fleet, planner, result, False) == []
    [phi] = [entry for entry in result.placements if entry.job == "phi"]
    yarn = phi.model_copy(update={"plan": phi.plan.model_copy(update={"rope_scaling_factor": 2.0})})
    wrong = result.model_copy(update={"placements": tuple(yarn if entry.job == "phi" else entry
                                                          for entry in result.placements)})
    assert "job 'phi': plan: rope_scaling_factor=2.0, expected None (no YaRN for phi-4 at 32768 tokens)" in (
        reference_problems(fleet, planner, wrong, False))


def test_the_check_counts_lora_jobs_on_listed_modules_and_their_rollouts_slots(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # A LoRA job on all-linear with a rollout and one on q_proj,v_proj: the reference counts both (a list, not None),
    # holds the rollout engines to vLLM's LoRA slots and the plans to their adapter's host memory; a regex stays
    # uncounted (None: PEFT's matching is not re-derived).
    asked = kept_calls(monkeypatch, "place")
    jobs = [{"name": "all", "model": "Qwen3-8B", "max_model_len": 16384, "rollout_gpus": 2, "lora_rank": 16},
            {"name": "qv", "model": "Qwen3-4B", "max_model_len": 16384, "lora_rank": 64,
             "lora_targets": "q_proj, v_proj"}]
    fleet_file = tmp_path / "fleet.yaml"
    fleet_file.write_text(yaml.safe_dump({"pools": [{**pool(), "host_ram_gb": 1024}], "jobs": jobs}),
                          encoding="utf-8")
    solver.place(fleet_file)
    [(fleet, planner, result)] = asked
    assert reference_problems(fleet, planner, result, False) == []
    placed = {entry.job: entry for entry in result.placements}
    assert (placed["qv"].plan.lora_target_modules, placed["all"].rollout_engines.lora_gib) == (
        ".*\\.(q_proj|v_proj)", pytest.approx(0.09, abs=0.005))
    slots = placed["all"].model_copy(update={"rollout_engines": placed["all"].rollout_engines.model_copy(
        update={"lora_gib": 0.5})})
    host = placed["qv"].model_copy(update={"plan": placed["qv"].plan.model_copy(
        update={"host_memory_gb": placed["qv"].plan.host_memory_gb + 1})})
    wrong = result.model_copy(update={"placements": (slots, host)})
    problems = reference_problems(fleet, planner, wrong, False)
    assert "job 'all': rollout_engines.lora_gib=0.5, expected 0.09" in problems
    assert any(problem.startswith("job 'qv': plan: the memory figures") for problem in problems)
    regex = fleet.model_copy(update={"jobs": tuple(job.model_copy(update={"lora_targets": ".*\\.q_proj"})
                                                   for job in fleet.jobs)})
    assert any(problem.startswith("job 'all': plan: the memory figures")  # a regex is counted: another adapter's
               for problem in reference_problems(regex, planner, result, False))
