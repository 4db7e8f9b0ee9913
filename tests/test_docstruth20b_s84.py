"""What docs/api.md, docs/json.md and docs/cluster.md say, held to the code (session 84's second pass)."""

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import solver
from solver.cluster.model import tied_job_weight
from solver.tables.text import CACHED_NAME_LENGTH
from solver.trinity.patch import _merge_takes_last

ROOT = Path(__file__).resolve().parent.parent
API_PAGE = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")


def _unbounded_caches() -> list[str]:
    """The functions of the API's modules (not the command's, `solver.cli` and `__main__`) whose functools cache
    keeps every argument it was given: an `lru_cache(maxsize=None)` or `cache` of a function that takes any."""
    found = []
    for info in pkgutil.walk_packages(solver.__path__, "solver."):
        if info.name.startswith(("solver.cli", "solver.__main__")):  # the command's, as solve runs them
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            parameters = getattr(value, "cache_parameters", None)
            if (parameters is not None and getattr(value, "__module__", None) == info.name
                    and parameters()["maxsize"] is None and inspect.signature(value).parameters):
                found.append(f"{info.name}.{name}")
    return found


def test_every_cache_the_api_fills_is_bounded_as_in_a_service_says():
    assert "The caches are bounded" in API_PAGE
    assert _unbounded_caches() == []


def test_a_merged_key_longer_than_the_cached_names_is_read_as_a_short_one():
    # `<<: [*a, *b]` takes a key of more than one character from b as PyYAML reads it, long or short (a long key is
    # worked out anew, not cached), and a one-character key from a.
    long_key = "k" * (CACHED_NAME_LENGTH + 1)
    assert [_merge_takes_last(key) for key in ("kk", long_key, long_key, "k")] == [True, True, True, False]


def _paragraph(start: str) -> str:
    """api.md's text from `start` on, far enough to hold the field list it starts."""
    return start + API_PAGE.split(start, 1)[1][:6000]


def test_api_md_names_every_field_of_the_memory_answers_question_in_order():
    words = _paragraph("`MemoryAnswer` (what `solve memory --json` prints")
    named = [name for name in re.findall(r"`([a-z_]+)`", words) if name in solver.MemoryQuestion.model_fields]
    assert list(dict.fromkeys(named)) == list(solver.MemoryQuestion.model_fields)


def test_api_md_names_every_field_of_an_unplaced_job():
    words = _paragraph("`unplaced` (`job`, `reason`")
    words = words.split("`required`: the names of the jobs", 1)[0]
    named = set(re.findall(r"`([a-z_]+)`", words))
    assert set(solver.Unplaced.model_fields) - named == set()


def _named_between(start: str, stop: str) -> set[str]:
    """The names in backquotes of api.md's text from `start` to `stop`."""
    return set(re.findall(r"`([a-z_]+)`", API_PAGE.split(start, 1)[1].split(stop, 1)[0]))


def test_api_md_names_every_field_of_the_results_it_lists():
    listed = {
        # apply, apply_left_out and config_keys_changed: solve --json's alone, said under Words.
        solver.Answer: (_named_between("Results: `Answer` (", "`Plan` (the fields"),
                        {"apply", "apply_left_out", "config_keys_changed"}),
        solver.ClusterResult: (_named_between("`ClusterResult` (", "`Breakdown` ("), {"memory_model_source"}),
        solver.PurchaseResult: (_named_between("| `PurchaseResult` (", " | "), set()),
        solver.Breakdown: (_named_between("`Breakdown` (", "`MemoryEstimate` ("), set()),
        solver.MemoryEstimate: (_named_between("`MemoryEstimate` (", "`MemoryAnswer` ("),
                                set(solver.Breakdown.model_fields)),  # a Breakdown's, listed above
    }
    # A ClusterResult's memory_model_source is said where place returns it, in place's row.
    assert "`ClusterResult` (its `memory_model_source`" in API_PAGE
    assert {kind.__name__: set(kind.model_fields) - named - elsewhere
            for kind, (named, elsewhere) in listed.items()} == {kind.__name__: set() for kind in listed}


def _json_keys(kind: type) -> list[str]:
    """The keys `kind`'s JSON gives, in their order: its fields (less those left out of the JSON), then its computed
    fields."""
    return [name for name, field in kind.model_fields.items() if not field.exclude] + list(kind.model_computed_fields)


def test_cluster_md_gives_the_json_keys_in_the_order_solve_cluster_prints_them():
    page = (ROOT / "docs" / "cluster.md").read_text(encoding="utf-8")
    bought = page.split('- `--json`: `{"status", "gpus"', 1)[1].split("`\n", 1)[0]
    words = page.split('- `--json`: `{"status": "optimal"', 1)[1].split("\n- `--emit-dir DIR`", 1)[0]
    placements, rest = words.split('"placements": [{', 1)[1].split('"unplaced": [{', 1)
    unplaced = rest.split('"required": [', 1)[0]
    top = words.replace(placements, "").replace(unplaced, "")

    def quoted(text: str, kind: type) -> list[str]:
        return list(dict.fromkeys(name for name in re.findall(r'"([a-z_]+)"', text) if name in _json_keys(kind)))
    assert quoted('"status"' + top, solver.ClusterResult) == _json_keys(solver.ClusterResult)
    assert quoted('"placements"' + placements, solver.Placement) == _json_keys(solver.Placement)
    assert quoted('"unplaced"' + unplaced, solver.Unplaced) == _json_keys(solver.Unplaced)
    assert quoted('"status", "gpus"' + bought, solver.PurchaseResult) == _json_keys(solver.PurchaseResult)


def test_json_md_names_every_key_that_holds_a_plan_where_it_says_plans_carry_caution_codes():
    page = (ROOT / "docs" / "json.md").read_text(encoding="utf-8")
    words = page.split("A plan's `cautions` (in ", 1)[1].split(") come with `caution_codes`", 1)[0]
    named = set(re.findall(r"`([a-z_.]+)`", words))
    holders = {solver.Answer: "", solver.RolloutKept: "rollout_kept.", solver.RoomKept: "room_kept.",
               solver.CurrentSettings: "current.", solver.Placement: ""}
    plans = {prefix + name for kind, prefix in holders.items() for name, field in kind.model_fields.items()
             if "Plan" in str(field.annotation) and not field.exclude}
    assert plans - named == set()


def test_cluster_md_weighs_the_tie_of_its_two_small_jobs_as_the_placement_does():
    # Two jobs of priority 2 on half a node each, then one of priority 3 that needs the whole node: at priority 4 the
    # small jobs, first in the file, weigh 2 x 3 + 2 x 2 against its 4 x 1, so 5 is the least that places it.
    page = (ROOT / "docs" / "cluster.md").read_text(encoding="utf-8")
    assert "weigh 2 x 3 + 2 x 2 = 10 against its 4 x 1" in " ".join(page.split())
    small = {"model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 3, "priority": 2}
    fleet = solver.Fleet.model_validate({
        "pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "small-0", **small}, {"name": "small-1", **small},
                 {"name": "big", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 7, "priority": 3}]})
    assert [tied_job_weight(fleet, job, priority) for job, priority in ((0, 2), (1, 2), (2, 4))] == [6, 4, 4]
    (big,) = solver.place(fleet, time_limit_s=10).unplaced
    assert big.reason.endswith("small-0, small-1 (priority 4 together) hold the room it needs: priority 5 is the least "
                               "that places it")
    assert big.reason in " ".join(page.split()).replace("POOL", "a100")


def test_a_placements_plan_counts_its_nodes_without_rollout_gpus_as_json_md_says():
    page = " ".join((ROOT / "docs" / "json.md").read_text(encoding="utf-8").split())
    assert "1 for a job without rollout GPUs on one node" in page
    fleet = solver.Fleet.model_validate({
        "pools": [{"name": "a", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
        "jobs": [{"name": "j", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 0}]})
    (placed,) = solver.place(fleet, time_limit_s=10).placements
    assert (placed.plan.nodes, placed.plan.rollout_gpus) == (1, 0)
    (answer,) = solver.plan("4B", gpu="a100", max_model_len=8192, budget_gpus=4)
    assert answer.best is not None and answer.best.nodes is None  # solve without --rollout-gpus
