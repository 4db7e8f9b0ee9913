"""Review of s82's cluster, release and deadline merges (s82, helper review82b): ``benchmarks/trinity_fields.py`` reads
a field of the legacy ``veRLConfig`` typed as a ``Union`` of several types as Trinity 0.6.0's
``build_dataclass_from_mapping`` takes it (``_strip_optional`` strips ``None`` alone, so such a value is kept as
written: no key below it is dropped, and none may be judged), and `Placement.runs_on_plans_release`, the one test of a
running job whose plan names its release, shared by the cluster table's Trinity column and ``placement_configs``; an
answer's ``undecided`` explanation names ``deadline_s`` as the answer's `Answer.deadline_passed` says (as its reason and
the line under it do), not as the deadline stands when it is explained."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from benchmark_modules import load_benchmark
from command_words import make_query

import solver
import solver.solve as solve_module
from solver.explain import explain
from solver.rules import API_OPTIONS
from solver.solve import plan
from solver.tables import QueryError, load_catalog

CATALOG = load_catalog()

UNION_SOURCE = '''
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union


@dataclass
class Inner:
    a: int = 1


@dataclass
class veRLConfig:
    either: Union[Inner, str] = "x"
    maybe: Union[Inner, None] = None
    optional: Optional[Inner] = None
    nested: Optional[Union[Inner, Dict[str, Any]]] = None
    listed: Union[List[str], str] = "y"
    scalar: Union[int, str] = 0
'''


def test_a_union_of_several_types_is_open_and_optional_of_one_a_section():
    # Trinity 0.6.0 (trinity/common/dataclass_utils.py): Optional[Inner] and Union[Inner, None] build an Inner, which
    # drops a key it lacks; Union[Inner, str] is left a Union, so {"a": 2, "zz": 3} is kept whole, zz and all. Before,
    # the first member was walked as a section, and a key below it would have been told dropped when it is kept.
    found = load_benchmark("trinity_fields").legacy_sections(UNION_SOURCE)
    assert found == {"sections": {"": ["either", "listed", "maybe", "nested", "optional", "scalar"],
                                  "maybe": ["a"], "optional": ["a"]},
                     "open": {"either": [], "nested": [], "listed": []},
                     "null": ["maybe", "nested", "optional"]}


def test_a_running_job_on_its_plans_release_is_told_by_one_property():
    fleet = "docs/examples/smaller-asks.yaml"
    now = solver.place(fleet, trinity_version="0.5")
    assert [(p.job, p.current, p.plan.trinity_version, p.runs_on_plans_release) for p in now.placements] == [
        ("chat-14b", None, "0.5", False)]  # no --current: none runs now
    again = solver.place(fleet, current=now)
    placed = again.placements[0]
    assert (placed.job, placed.current, placed.plan.trinity_version, placed.runs_on_plans_release) == (
        "chat-14b", "stays", "0.5", True)
    moved = placed.model_copy(update={"current": "moves"})
    assert moved.runs_on_plans_release
    assert not placed.model_copy(update={"current": "starts"}).runs_on_plans_release
    assert not moved.model_copy(update={"plan": moved.plan.model_copy(update={"trinity_version": None})}
                                ).runs_on_plans_release
    # the table names each job's release for it, and the fragment names the plan's as what gives it
    assert "Trinity" in solver.cluster_text(again, fleet) and "Trinity" not in solver.cluster_text(now, fleet)
    fragment = solver.placement_configs(again, fleet)["chat-14b"]
    assert "written for Trinity 0.5 (its plan's trinity_version 0.5)" in " ".join(
        line.lstrip("# ") for line in fragment.splitlines())


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_an_answer_given_before_the_deadline_is_explained_as_its_own_lines_say():
    # answer_query explains the answers after all are given: one whose search the time limit ran out of before the
    # call's deadline_s passed was explained, once it had passed, as cut by the deadline, while its reason and the line
    # under it named the time limit alone. The explanation now reads the answer's own deadline_passed.
    query = make_query(CATALOG, gpu="a100", model="14B", max_model_len=32768, budget_gpus=4, option_names=API_OPTIONS)
    (answer,) = plan(query, CATALOG)
    timed_out = answer.model_copy(update={"status": "unknown", "plans": (), "reason": "no plan found within the time "
                                          "limit of 10 s"})
    assert not timed_out.deadline_passed
    with solve_module.call_deadline(1e-9):  # passed by the time it is explained
        explanation = explain(CATALOG, query, timed_out)
    assert [(reason.rule, reason.detail) for reason in explanation] == [("undecided", (
        "the search ran out of time (time_limit_s=10) before it found a plan or proved that none exists: nothing is "
        "known to rule one out; a longer time_limit_s decides it"))]
    assert solver.answers_text([timed_out], query).splitlines()[1:3] == [
        "no plan found within the time limit of 10 s",
        "a longer time_limit_s lets the search find a plan or prove that none exists"]


def test_place_takes_its_source_as_a_path_as_it_takes_the_fleet(tmp_path: Path):
    # A Fleet read from a file: the refusal of a running job's LoRA targets under the release it runs on names the
    # file given as source, a Path as well as a str (as `fleet` itself may be either); not a type error.
    pools = [{"name": "h", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 8}]
    job = {"name": "moe", "model": "Qwen3-30B-A3B", "max_model_len": 8192, "rollout_gpus": 2, "lora_rank": 8}
    first, changed = tmp_path / "f1.yaml", tmp_path / "f2.yaml"
    first.write_text(yaml.safe_dump({"pools": pools, "jobs": [job]}), encoding="utf-8")
    regex_job = {**job, "lora_targets": r".*experts\.(gate|up)_proj"}
    changed.write_text(yaml.safe_dump({"pools": pools, "jobs": [regex_job]}), encoding="utf-8")
    now = solver.place(first, trinity_version="0.5.1")  # runs on 0.5.1, whose experts are separate modules
    fleet = solver.load_fleet(changed)
    for source in (changed, str(changed)):
        with pytest.raises(QueryError) as refused:
            solver.place(fleet, current=now, source=source)
        assert str(refused.value).startswith(f"{changed}: job moe: lora_targets '.*experts\\.(gate|up)_proj' matches "
                                             "no module of Qwen3-30B-A3B")
    with pytest.raises(QueryError, match=r"^source must be a Path, a str or None, got 1$"):
        solver.place(fleet, current=now, source=1)  # type: ignore[arg-type]
