"""The smaller-ask hints of `solve cluster` (`reasons.SmallerAsks`, `search._Hints`): tests written to kill the
mutants of session 52's mutation testing that the other tests let live, each checked by the brute force
(`cluster_reference.check_smaller_asks`) where it gives hints; and that brute force's own independence."""

from __future__ import annotations

import ast
import json
import math
import time
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from cluster_api import place
from cluster_reference import check_placements, check_smaller_asks

import solver.clock
import solver.cluster.reasons
import solver.cluster.search
from solver.cluster.options import Planner, job_options
from solver.cluster.placements import as_placement
from solver.cluster.reasons import SmallerAsks
from solver.tables import load_catalog, load_fleet, load_weights

CATALOG = load_catalog()
TESTS = Path(__file__).parent
EXAMPLE = TESTS.parent / "docs" / "examples" / "smaller-asks.yaml"


def pool_of(nodes: int, host_ram_gb: int | None = None, name: str = "a") -> dict:
    """An A100 pool of `nodes` 8-GPU nodes (with `host_ram_gb` per node, where given)."""
    return {"name": name, "gpu": "A100-80GB", "nodes": nodes, "gpus_per_node": 8,
            **({} if host_ram_gb is None else {"host_ram_gb": host_ram_gb})}


def filler(node: int, trainer: int, rollout: int, model: str = "Qwen3-0.6B", offload: bool | None = None,
           pool: int = 0) -> dict:
    """A job placed on `node` (of the `pool`th pool) with a plan of `trainer` GPUs beside `rollout` GPUs (with
    Offload or not, where given)."""
    return {"node": node, "trainer": trainer, "rollout": rollout, "model": model, "offload": offload, "pool": pool}


def smaller_asks(tmp_path: Path, pools: dict | list[dict], fillers: list[dict], job: dict,
                 until: float = math.inf) -> tuple[SmallerAsks, dict, dict]:
    """The smaller asks of `job` (named x, the last job) beside `fillers` placed as they say (the idle room is the
    rest), asked until `until`; with the instance and the placements' JSON (as `solve cluster`
    gives them)."""
    instance = {"pools": pools if isinstance(pools, list) else [pools], "jobs": [
        *({"name": f"f{i}", "model": f["model"], "max_model_len": 8192, "rollout_gpus": f["rollout"]}
          for i, f in enumerate(fillers)), {"name": "x", **job}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    fleet = load_fleet(path, CATALOG)
    planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
    final = {}
    for i, f in enumerate(fillers):
        final[i] = (next(o for o in job_options(planner, fleet, i) if o.pool == f["pool"] and o.size
                         and o.plan.gpus == f["trainer"] and f["offload"] in (None, o.plan.offload)), [f["node"]])
    placements = [json.loads(as_placement(planner, fleet, option, nodes, tuple(range(option.size))).model_dump_json())
                  for option, nodes in final.values()]
    return SmallerAsks(planner, fleet, final, until), instance, {"placements": placements}


def hints(tmp_path: Path, pools: dict | list[dict], fillers: list[dict], job: dict) -> tuple[list[dict], str]:
    """`fits_with` (JSON) and the reason's clause for `job` beside `fillers`, checked by the brute force."""
    asks, instance, result = smaller_asks(tmp_path, pools, fillers, job)
    index = len(fillers)
    fits = asks.fits_with(index)
    words = asks.words(asks.fleet.jobs[index], fits, several=False)
    unplaced = {"job": "x", "reason_code": "no-room", "reason": f"no room{words}",
                "fits_with": [json.loads(f.model_dump_json()) for f in fits]}
    assert check_smaller_asks(CATALOG, instance, {**result, "unplaced": [unplaced]}, estimates=True) == []
    return unplaced["fits_with"], words


def fits(rollout: int, length: int, node: int, trainer: int) -> dict:
    """A `fits_with` entry (JSON) on one node of pool a."""
    return {"rollout_gpus": rollout, "max_model_len": length, "pool": "a", "nodes": [node], "whole_nodes": 0,
            "trainer_gpus": trainer}


def test_the_length_cut_is_the_longest_of_those_that_fit(tmp_path: Path):
    # 4B's longest on 4 GPUs is 102400 tokens, on 2 it is 51200: both fit their node, and the longer is told.
    fits_with, words = hints(tmp_path, pool_of(2), [filler(0, 1, 3), filler(1, 1, 5)],
                             {"model": "Qwen3-4B", "max_model_len": 131072})
    assert fits_with == [fits(0, 102400, 0, 4)]
    assert words == "; at 102400 tokens (not 131072) it would fit in node 0's 4 idle GPUs (a trainer of 4 GPUs)"


def test_the_lengths_are_asked_on_the_most_idle_nodes_first(tmp_path: Path):
    # Five nodes with 8, 1, 2, 3 and 5 idle GPUs: only four are asked, the most idle first, so 8 GPUs' 222208 tokens
    # (not 5 GPUs' or fewer's 51200 at the most) is the length told.
    fits_with, _ = hints(tmp_path, pool_of(5), [filler(1, 1, 6), filler(2, 1, 5), filler(3, 1, 4), filler(4, 1, 2)],
                         {"model": "Qwen3-4B", "max_model_len": 262144})
    assert fits_with == [fits(0, 222208, 0, 8)]


def test_the_fourth_most_idle_node_is_asked_its_longest_length(tmp_path: Path):
    # Nodes 0-2 (7, 6, 5 idle GPUs) keep 26.6 GiB of idle host memory beside a 4B job with Offload (93.4 GiB): too
    # little for 4B on any count (36.2 GiB on one GPU at least). Node 3 (4 idle GPUs, 114.8 GiB beside a 0.6B job's
    # 5.2) holds it: at its own longest on 4 GPUs, 102400 tokens (Offload's 102.2 GiB), which only the fourth node
    # asked gives (with one or two asked, none or a shorter length fits).
    offloading = [filler(node, 1, node, "Qwen3-4B", offload=True) for node in range(3)]
    fits_with, words = hints(tmp_path, pool_of(4, host_ram_gb=120), [*offloading, filler(3, 1, 3)],
                             {"model": "Qwen3-4B", "max_model_len": 262144})
    assert fits_with == [fits(0, 102400, 3, 4)]
    assert words == ("; at 102400 tokens (not 262144) it would fit in node 3's 4 idle GPUs and 114.8 GiB of idle host "
                     "memory (a trainer of 4 GPUs)")


def test_a_job_that_fits_as_asked_is_told_no_length_of_its_own(tmp_path: Path):
    # 4B at 51200 takes 2 trainer GPUs (the longest on 2) beside 6 rollout GPUs: an idle node holds it as asked
    # (a placement not proven best can leave it so). Its own length is no shorter ask; one rollout GPU fewer is, and
    # the longest on 1 trainer GPU, 28672 tokens (each trainer count the node leaves is asked).
    fits_with, _ = hints(tmp_path, pool_of(1), [], {"model": "Qwen3-4B", "max_model_len": 51200, "rollout_gpus": 6})
    assert fits_with == [fits(5, 51200, 0, 2), fits(6, 28672, 0, 1)]


ROLLOUT_JOB = {"model": "Qwen3-0.6B", "max_model_len": 32768, "rollout_gpus": 4}
"""Beside a filler leaving 2 idle GPUs, told 0 rollout GPUs: the second count asked (it trains on 2 GPUs at the
fewest, so 1 rollout GPU, the first asked, leaves too few)."""


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_no_hint_is_asked_past_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    asked: list[object] = []
    best = Planner.best
    monkeypatch.setattr(Planner, "best", lambda *args, **kwargs: asked.append(args[2:4]) or best(*args, **kwargs))
    monkeypatch.setattr(solver.cluster.reasons, "job_options",
                        lambda *args: asked.append(args[2]) or job_options(*args))
    for job in (ROLLOUT_JOB, {"model": "Qwen3-4B", "max_model_len": 131072}):
        asks, _, _ = smaller_asks(tmp_path, pool_of(1), [filler(0, 4, 2, "Qwen3-14B")], job, until=math.inf)
        assert asks.fits_with(1) != ()  # in time, it is told
        asks.limit, asked[:] = replace(asks.limit, deadline=time.monotonic() - 1), []
        assert (asks.fits_with(1), asked) == ((), [])


def clock_running_out_after(monkeypatch: pytest.MonkeyPatch, target: object, name: str) -> list[int]:
    """A clock for `reasons` that reads 0 until `target.name` has been called once, then 10 (past a deadline of 5);
    the calls of `target.name`, counted."""
    calls, real = [0], getattr(target, name)

    def counted(*args: object, **kwargs: object) -> object:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(target, name, counted)
    monkeypatch.setattr(solver.clock, "seconds_left", lambda deadline: deadline - (10 if calls[0] else 0))
    return calls


def test_the_rollout_counts_stop_at_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    asks, _, _ = smaller_asks(tmp_path, pool_of(1), [filler(0, 4, 2, "Qwen3-14B")], ROLLOUT_JOB, until=5)
    calls = clock_running_out_after(monkeypatch, solver.cluster.reasons, "job_options")
    assert (asks.fits_with(1), calls) == ((), [1])  # 1 rollout GPU asked, then time is up


def test_the_lengths_stop_at_the_deadline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    asks, _, _ = smaller_asks(tmp_path, pool_of(1), [filler(0, 4, 2, "Qwen3-14B")],
                              {"model": "Qwen3-4B", "max_model_len": 131072}, until=5)
    calls = clock_running_out_after(monkeypatch, Planner, "best")
    assert (asks.fits_with(1), calls) == ((), [1])  # the longest length asked, then time is up: no length tried


@pytest.mark.wall_clock  # about the wall clock: keeps the real one
def test_ctrl_c_while_widening_tells_no_smaller_asks(monkeypatch: pytest.MonkeyPatch):
    # Ctrl-C ends the command's work: the placement stands, as placed, and no hint is asked (docs/cluster.md).
    def interrupted(*args: object, **kwargs: object) -> dict:
        raise KeyboardInterrupt

    monkeypatch.setattr(solver.cluster.search, "widen_jobs", interrupted)
    result = json.loads(place(load_fleet(EXAMPLE, CATALOG), catalog=CATALOG).model_dump_json())
    [unplaced] = result["unplaced"]
    assert result["interrupted"] is True
    assert unplaced["fits_with"] == [] and "it would fit" not in unplaced["reason"]
    assert check_smaller_asks(CATALOG, yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")), result,
                              estimates=True) == []


@pytest.mark.parametrize("wrong", [
    lambda entry: entry["fits_with"][0].update(rollout_gpus=1),
    lambda entry: entry["fits_with"][1].update(max_model_len=20480),
    lambda entry: entry["fits_with"][0].update(trainer_gpus=1),
    lambda entry: entry["fits_with"][0].update(whole_nodes=1),
    lambda entry: entry["fits_with"].reverse(),
    lambda entry: entry["fits_with"].pop(),
    lambda entry: entry.update(reason=entry["reason"].replace("98.9 GiB", "98.8 GiB")),
    lambda entry: entry.update(reason=entry["reason"].replace(", or at", ", at"))])
def test_the_brute_force_catches_a_wrong_hint(wrong):
    # The example: the 14B job's Offload plan needs 381.1 GiB of the node's 480 (every rank of the node loading the
    # untied model, no release named), which leaves the 4B job 98.9 GiB of idle host memory and its two smaller asks.
    instance = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    result = json.loads(place(load_fleet(EXAMPLE, CATALOG), catalog=CATALOG).model_dump_json())
    assert check_smaller_asks(CATALOG, instance, result, estimates=True) == []
    wrong(result["unplaced"][0])
    assert check_smaller_asks(CATALOG, instance, result, estimates=True) != []


def test_the_brute_force_calls_none_of_the_code_it_checks():
    # cluster_reference (and reference, which it builds on) may read the tables and use the memory model, never the
    # cluster planner, the solver's answers or its rules.
    for name in ("cluster_reference.py", "reference.py"):
        tree = ast.parse((TESTS / name).read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        assert {module for module in imported if module.startswith("solver")} <= {
            "solver.tables", "solver.memory", "solver.results"}, name


def test_a_rollout_of_none_is_the_eighth_count_asked_beside_an_idle_node(tmp_path: Path):
    # 14B at 131072 trains on 8 GPUs only: with any rollout it takes 2 whole nodes or more, and one is idle. The
    # counts asked start at 7 (the most that leaves a trainer GPU on the idle node), so the eighth is 0.
    fits_with, words = hints(tmp_path, pool_of(2), [filler(1, 1, 7)],
                             {"model": "Qwen3-14B", "max_model_len": 131072, "rollout_gpus": 16})
    assert fits_with == [fits(0, 131072, 0, 8)]
    assert words == ("; with rollout_gpus 0 (not 16; its explorer on GPUs outside the fleet) it would fit in node 0's "
                     "8 idle GPUs (a trainer of 8 GPUs)")
    # Said of several jobs given it, the room holds one of them.
    asks, _, _ = smaller_asks(tmp_path, pool_of(2), [filler(1, 1, 7)],
                              {"model": "Qwen3-14B", "max_model_len": 131072, "rollout_gpus": 16})
    assert asks.words(asks.fleet.jobs[1], asks.fits_with(1), several=True) == (
        "; with rollout_gpus 0 (not 16; the explorer on GPUs outside the fleet) one of them would fit in node 0's 8 "
        "idle GPUs (a trainer of 8 GPUs)")


def test_the_first_node_that_holds_it_is_named(tmp_path: Path):
    fits_with, _ = hints(tmp_path, pool_of(2), [filler(0, 4, 2, "Qwen3-14B"), filler(1, 4, 2, "Qwen3-14B")],
                         ROLLOUT_JOB)
    assert fits_with == [fits(0, 32768, 0, 2)]


def test_the_rollout_counts_start_from_the_room_of_the_pools_the_job_may_use(tmp_path: Path):
    # Pool b's 2 idle nodes are not x's: counting down from its 15 would stop at 1 (8 counts), and miss 0, which
    # node 0 of pool a (2 idle GPUs) holds, its 1 the first count asked.
    fits_with, _ = hints(tmp_path, [pool_of(1), pool_of(2, name="b")], [filler(0, 4, 2, "Qwen3-14B")],
                         {**ROLLOUT_JOB, "rollout_gpus": 9, "pool": "a"})
    assert fits_with == [fits(0, 32768, 0, 2)]


def test_the_longest_length_asked_is_one_the_pool_s_host_memory_holds(tmp_path: Path):
    # 150 GiB of host memory per node: 4B's longest on 8 GPUs with Offload (222208 tokens) needs 162.2 GiB, so the
    # longest there is without it, 198656 tokens (141.0 GiB as it loads), which the idle node holds.
    fits_with, words = hints(tmp_path, pool_of(1, host_ram_gb=150), [], {"model": "Qwen3-4B", "max_model_len": 262144})
    assert fits_with == [fits(0, 198656, 0, 8)]
    assert words == ("; at 198656 tokens (not 262144) it would fit in node 0's 8 idle GPUs and 150.0 GiB of idle host "
                     "memory (a trainer of 8 GPUs)")


def test_a_job_on_whole_nodes_is_told_only_the_idle_nodes_it_takes(tmp_path: Path):
    # 14B at 131072 (8 trainer GPUs) beside 8 rollout GPUs takes 2 whole nodes of the 3 idle ones (as asked, 9
    # rollout GPUs take 3: a placement not proven best can leave it out so).
    fits_with, words = hints(tmp_path, pool_of(3), [],
                             {"model": "Qwen3-14B", "max_model_len": 131072, "rollout_gpus": 9})
    assert fits_with == [{**fits(8, 131072, 0, 8), "nodes": [0, 1], "whole_nodes": 2}]
    assert words == "; with rollout_gpus 8 (not 9) it would fit on 2 of the 3 idle nodes (a trainer of 8 GPUs)"


def test_a_whole_node_hint_counts_only_the_wholly_idle_nodes(tmp_path: Path):
    # Node 2 has 7 idle GPUs, no idle node: x (9 rollout GPUs, 3 whole nodes) is told 8 rollout GPUs on nodes 0-1.
    fits_with, words = hints(tmp_path, pool_of(3), [filler(2, 1, 0)],
                             {"model": "Qwen3-14B", "max_model_len": 131072, "rollout_gpus": 9})
    assert fits_with == [{**fits(8, 131072, 0, 8), "nodes": [0, 1], "whole_nodes": 2}]
    assert words == "; with rollout_gpus 8 (not 9) it would fit on the 2 idle nodes (a trainer of 8 GPUs)"


def test_the_lengths_asked_are_those_of_the_pools_the_job_may_use(tmp_path: Path):
    # x may use pool a only, whose 2 idle GPUs give 4B's longest on 2, 51200 tokens. Pool b's 4 idle GPUs would give
    # 102400, but they are not x's to ask about.
    fits_with, _ = hints(tmp_path, [pool_of(1), pool_of(1, name="b")], [filler(0, 1, 5), filler(0, 1, 3, pool=1)],
                         {"model": "Qwen3-4B", "max_model_len": 131072, "pool": "a"})
    assert fits_with == [fits(0, 51200, 0, 2)]


@pytest.mark.parametrize(("widen", "fits_with"), [
    (False, [{"rollout_gpus": 1, "max_model_len": 8192, "pool": "a100", "nodes": [0], "whole_nodes": 0,
              "trainer_gpus": 1}]),
    (True, [])])
def test_the_hints_count_the_room_left_once_grown(widen: bool, fits_with: list[dict], tmp_path: Path):
    # probe is placed on 6 GPUs, and grows onto the node's other 2 when widened: x (1 + 7 GPUs at the fewest) would
    # fit those 2 with 1 rollout GPU, but only while they are idle.
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}], "jobs": [
        {"name": "probe", "model": "0.6B", "max_model_len": 8192, "priority": 2},
        {"name": "x", "model": "0.6B", "max_model_len": 8192, "rollout_gpus": 7}]}
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    result = json.loads(place(load_fleet(path, CATALOG), catalog=CATALOG, widen=widen).model_dump_json())
    assert [(p["job"], p["trainer_gpus"]) for p in result["placements"]] == [("probe", 8 if widen else 6)]
    assert result["unplaced"][0]["fits_with"] == fits_with
    assert check_placements(CATALOG, instance, result, estimates=True) == []
    assert check_smaller_asks(CATALOG, instance, result, estimates=True) == []
