"""Cluster capacity planning: which Trinity jobs fit on a fleet, where, and with which plans.

Each job's ways to run come from the planner (CP-SAT decides the cheapest plan for every pool and
trainer GPU count, or the longest length for jobs that may run longer). A second CP-SAT model then
chooses one way, or none, per job. Nodes in a pool are identical, so that model does not name nodes: it
counts how many nodes of each pool are filled with each *pattern* (a multiset of job footprints that fits
a node, among the footprints the jobs can have: GPUs, and the host memory a job needs there (its Offload
states, or its load at start-up) where the pool gives its nodes' host memory), and a job that needs more
than one node takes whole nodes.
The chosen patterns are then filled in node order to give each job its node indexes.

Each job the fleet marks ``required`` is placed (a constraint: where they cannot all be, there is no placement).
Objectives, one after the other (each stage keeps the value the stage before it reached): the total
priority of placed jobs (or, with ``minimize="nodes"``, every job placed on the fewest nodes), then, where the fleet
runs a placement now (``running``), the most of its jobs kept on their nodes and GPUs (`model.keep_running_jobs`;
weighed below the first stage's own count in that stage too, should the wall clock stop the search after it:
`model.first_stage_objective`), then, where priority ties, the jobs earlier in the file (`model.tied_jobs_order`: which
jobs run is settled before length and cost, whose costs of different models do not compare, but where the jobs'
places, weighed by priority, sum alike; skipped where the first stage placed every job with a way, no set of jobs
differing then: `model.most_priority`), then the longer contexts of jobs that asked for ``at_least`` a length, then
the least total step-time cost, and, where each of those is proven, a tie-break that picks one of the equally good
placements (`model.tie_break`).
Last, the jobs of a node with idle GPUs may grow onto them, or a job sharing a node move to a node no job uses
(`widen.widen_jobs`), where more GPUs run them faster or longer.

The modules, each using only those before it: `options` (the jobs' ways to run, and the patterns that fill a node),
`model` (the CP-SAT placement model), `placements` (chosen ways as `Placement`s), `reasons` (why jobs are left out),
`widen` (jobs grown onto idle GPUs), `greedy` (the baseline), `search` (`place`: the staged search and its answer) and
`buy` (`buy`: the fewest GPUs, then nodes, to add so that every job is placed, on the same model and stages). The
deadlines read the wall clock on `solver.clock`, as the planner's solves do. The names other layers use are imported
from here (`__all__`); those the modules share with each other alone, the private ones and the knobs a test may patch
(`PATTERN_GROWTH`, `PATTERN_FLOOR` and `PATTERN_BUDGET` in `options`, `WIDEN_DETERMINISTIC_TIME` and
`WIDEN_TIME_LIMIT_S` in `widen`, `REASONS_SHARE` and `DETERMINISTIC_PER_SECOND` in `search`,
`HINTS_QUESTIONS_PER_SECOND` and `REASONS_QUESTIONS_PER_SECOND` in `reasons`), from their modules: a patch takes
effect only where the code reads it.
"""

from solver.cluster.buy import buy
from solver.cluster.greedy import greedy
from solver.cluster.model import build_placement_model
from solver.cluster.options import (
    COST_SCALE,
    JOB_BATCH_SOURCE,
    JOB_LENGTH_KEY,
    JOB_LORA_KEYS,
    JOB_RELEASE_KEY,
    JOB_VERSION_KEY,
    PLAN_RELEASE_KEY,
    POOL_HOST_RAM_SOURCE,
    Footprint,
    Option,
    Planner,
    TooManyPatterns,
    host_capacity_tenths,
    host_footprints,
    job_options,
    layout,
    option_name,
    pattern_name,
    patterns,
)
from solver.cluster.placements import pool_use
from solver.cluster.search import STAGES, least_time_limit_to_search_s, place

__all__ = [
    "COST_SCALE",
    "JOB_BATCH_SOURCE",
    "JOB_LENGTH_KEY",
    "JOB_LORA_KEYS",
    "JOB_RELEASE_KEY",
    "JOB_VERSION_KEY",
    "PLAN_RELEASE_KEY",
    "POOL_HOST_RAM_SOURCE",
    "STAGES",
    "Footprint",
    "Option",
    "Planner",
    "TooManyPatterns",
    "build_placement_model",
    "buy",
    "greedy",
    "host_capacity_tenths",
    "host_footprints",
    "job_options",
    "layout",
    "least_time_limit_to_search_s",
    "option_name",
    "pattern_name",
    "patterns",
    "place",
    "pool_use",
]
