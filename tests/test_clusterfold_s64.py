"""Session 64's fold of the cluster planner (helper clusterfold): a job's asked length read through one accessor
(`asked_max_model_len`, `at_most`), whatever form its `max_model_len` takes; the invariant the --buy note's
beyond-any-nodes test now leans on (each job with no way to run has a pool entry for every pool it may use); and one
required job alone is always placed (why the infeasible words name two required jobs at least)."""

from __future__ import annotations

import pytest
from cluster_api import place

from solver.results import PoolCode, UnplacedCode
from solver.tables import Fleet, Job, load_catalog

CATALOG = load_catalog()


@pytest.mark.parametrize(("max_model_len", "asked", "at_most"), [
    (32768, 32768, None),
    ({"at_least": 32768}, 32768, None),
    ({"at_least": 32768, "at_most": 65536}, 32768, 65536)])
def test_a_jobs_asked_length_and_cap_read_the_same_in_every_form(
        max_model_len: object, asked: int, at_most: int | None):
    job = Job.model_validate({"name": "j", "model": "Qwen3-4B", "max_model_len": max_model_len})
    assert (job.asked_max_model_len, job.at_most) == (asked, at_most)


def test_a_job_with_no_way_to_run_names_every_pool_it_may_use():
    # `_note_beyond_any_nodes` reads `all(...)` over a job's pools with no guard for none: a job with no way to run
    # gets one entry per pool it may use, and it may use one at least (its `pool`, where given, must name one).
    fleet = Fleet.model_validate({
        "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8},
                  {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "anywhere", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 16},
                 {"name": "pinned", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 8, "pool": "h20"}]})
    result = place(fleet, catalog=CATALOG)
    pools = {job.job: [(pool.pool, pool.reason_code) for pool in job.pools] for job in result.unplaced
             if job.reason_code == UnplacedCode.NO_WAY_TO_RUN}
    assert pools == {"anywhere": [("a100", PoolCode.ROLLOUT_TAKES_POOL), ("h20", PoolCode.ROLLOUT_TAKES_POOL)],
                     "pinned": [("h20", PoolCode.ROLLOUT_TAKES_POOL)]}


def test_one_required_job_is_placed_where_a_job_of_more_priority_wants_its_room():
    # A required job has a way (else it fits nowhere, said apart), and a way fits its pool's free nodes: one required
    # job alone never makes the placement infeasible, so those words always name two or more.
    fleet = Fleet.model_validate({
        "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "big", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 6, "priority": 100},
                 {"name": "must", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 6, "required": True}]})
    result = place(fleet, catalog=CATALOG)
    assert (result.status, [p.job for p in result.placements], [u.job for u in result.unplaced]) == (
        "optimal", ["must"], ["big"])
