"""An ``at_least`` job's stretch (s63): an optional cap, ``{at_least: N, at_most: M}``, checked as a cluster file's
other fields are; and a stretch that stops short of a plan carrying the thin-headroom caution, at the longest length
a plan keeps the room that caution asks for (`ways_in_pool`), as the brute force reference does (`_stretch_plan`)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from cluster_reference import best_value, ceiling, random_idle_instance, random_instance, value_of
from conftest import planner_answers_shared
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cluster import CATALOG, reaches_the_optimum_then_widens, solved

from solver.cli import main
from solver.cluster.options import stretch_ceiling
from solver.tables import AtLeast


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


H20_NODE = {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 1024}


def moe_64k(max_model_len: object) -> dict:
    """persona8's moe-64k (Qwen3-30B-A3B, 4 rollout GPUs) alone on one of its H20 nodes, at `max_model_len`."""
    return {"pools": [H20_NODE], "jobs": [{"name": "moe-64k", "model": "Qwen3-30B-A3B", "rollout_gpus": 4,
                                           "max_model_len": max_model_len}]}


def fourteen_b(max_model_len: object) -> dict:
    """persona9's Qwen3-14B on a node of 4 H20s, at `max_model_len`."""
    return {"pools": [{"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 4}],
            "jobs": [{"name": "q14b", "model": "Qwen3-14B", "rollout_gpus": 0, "max_model_len": max_model_len}]}


def placed(result: dict) -> tuple[object, ...]:
    """The one placement's trainer GPUs, length, (Env, Offload, SP), room to spare, caution codes and evidence."""
    [placement] = result["placements"]
    plan = placement["plan"]
    return (placement["trainer_gpus"], plan["max_model_len"], (plan["env"], plan["offload"], plan["sp"]),
            plan["headroom_gb"], plan["caution_codes"], plan["evidence"])


def test_a_stretch_stops_short_of_thin_headroom(tmp_path: Path):
    # The longest on 4 H20s, 129024, leaves 0.06 GiB where the estimate extrapolates; the caution asks 2.49 (a GiB,
    # and the 1.49 its gathered layers may take more): 124928 has 2.64 GiB to spare at the run's margin, 125952 1.99
    # (s64: exact on the grid; at the caution's --margin 0.04, rounded up, the stop was 123904). Before s63, 129024.
    instance = moe_64k({"at_least": 65536})
    result = solved(instance, tmp_path)
    assert placed(result) == (4, 124928, (True, True, 4), 2.64, [], "estimated")
    assert value_of(CATALOG, instance, result) == best_value(CATALOG, instance, estimates=True)
    # A length asked exactly, or as the least, is not a stretch: it keeps its thin plan (and its caution).
    for asked in (129024, {"at_least": 129024}):
        assert placed(solved(moe_64k(asked), tmp_path)) == (
            4, 129024, (True, True, 4), 0.06, ["thin-headroom"], "estimated")
    # Where the stop does not reach the least asked, the job runs at that least: 125000, past 124928, has 2.59 GiB
    # to spare.
    instance = moe_64k({"at_least": 125000})
    result = solved(instance, tmp_path)
    assert placed(result) == (4, 125000, (True, True, 4), 2.59, [], "estimated")
    assert value_of(CATALOG, instance, result) == best_value(CATALOG, instance, estimates=True)


def test_the_stretch_shows_no_thin_headroom_caution(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "fleet.yaml"
    path.write_text(json.dumps(moe_64k({"at_least": 65536})), encoding="utf-8")
    assert main(["cluster", str(path)]) == 0
    out = capsys.readouterr().out
    assert "124928 (≥65536)" in out and "129024" not in out
    assert "GiB to spare where the estimate extrapolates" not in out


def test_at_most_caps_the_stretch(tmp_path: Path):
    # Qwen3-14B on 4 H20s: the tables' Env + Offload + SP=4 reaches 112640; a cap stops it there, in tokens or k.
    assert placed(solved(fourteen_b({"at_least": 65536}), tmp_path)) == (
        4, 112640, (True, True, 4), 0.56, [], "documented")
    instance = fourteen_b({"at_least": 65536, "at_most": 81920})
    result = solved(instance, tmp_path)
    assert placed(result)[:3] == (4, 81920, (True, True, 4))
    assert value_of(CATALOG, instance, result) == best_value(CATALOG, instance, estimates=True)
    [placement] = result["placements"]
    assert (placement["asked_max_model_len"], placement["at_least"], placement["at_most"]) == (65536, True, 81920)
    # A cap equal to the least keeps the job at it; no cap, or an exact length, gives at_most null.
    assert placed(solved(fourteen_b({"at_least": 65536, "at_most": 65536}), tmp_path))[1] == 65536
    assert solved(fourteen_b({"at_least": 65536}), tmp_path)["placements"][0]["at_most"] is None
    assert solved(fourteen_b(65536), tmp_path)["placements"][0]["at_most"] is None


def test_a_cap_in_thousands_reads_as_at_least_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "fleet.yaml"
    path.write_text(json.dumps(fourteen_b({"at_least": "64k", "at_most": "80k"})), encoding="utf-8")
    assert main(["cluster", str(path), "--json"]) == 0
    [placement] = json.loads(capsys.readouterr().out)["placements"]
    assert (placement["asked_max_model_len"], placement["at_most"], placement["plan"]["max_model_len"]) == (
        65536, 81920, 81920)


def test_at_most_does_not_lift_the_validated_ceiling(tmp_path: Path):
    # Qwen3-4B: YaRN is validated to 131072. A cap above it does not lift it; an at_least above it still asks more.
    cases = [(AtLeast(at_least=32768), 131072), (AtLeast(at_least=32768, at_most=65536), 65536),
             (AtLeast(at_least=102401, at_most=200000), 131072), (AtLeast(at_least=200000, at_most=250000), 200000),
             (AtLeast(at_least=200000), 200000)]
    model = CATALOG.model("Qwen3-4B")
    assert [stretch_ceiling(asked, model) for asked, _ in cases] == [want for _, want in cases]
    assert [ceiling(CATALOG, {"model": "Qwen3-4B", "max_model_len": asked.model_dump(exclude_none=True)})
            for asked, _ in cases] == [want for _, want in cases]
    # As docs/cluster.md says: on a node of 8 A100s, the estimate on 8 GPUs stops at 131072 with the cap of 200000.
    instance = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                "jobs": [{"name": "j", "model": "Qwen3-4B", "rollout_gpus": 0,
                          "max_model_len": {"at_least": 102401, "at_most": 200000}}]}
    assert placed(solved(instance, tmp_path))[:3] == (8, 131072, (True, False, 8))


@pytest.mark.parametrize(("length", "message"), [
    ("{at_least: 65536, at_most: 60000}", ("line 4: job j, max_model_len: at_most must be at least at_least (65536), "
                                           "got 60000")),
    ("{at_least: 64k, at_most: 63k}", ("line 4: job j, max_model_len: at_most must be at least at_least (65536), got "
                                       "64512")),
    ("{at_least: 64k, at_most: 0}", "line 4: job j, max_model_len, at_most: must be above 0, got 0"),
    ("{at_least: 64k, at_most: x}", ("line 4: job j, max_model_len, at_most: must be a whole number, got 'x' (tokens, "
                                     "or thousands of 1024: 32768 or 32k)")),
    ("{at_least: 64k, max: 80k}", ("line 4: job j, max_model_len: unknown field 'max' (did you mean at_most? fields: "
                                   "at_least, at_most)")),
    ("{at_most: 80k}", "line 4: job j, max_model_len: missing field 'at_least' (fields: at_least, at_most)"),
])
def test_a_bad_cap_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], length: str,
                                          message: str):
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: a, gpu: a100, nodes: 1, gpus_per_node: 8}\njobs:\n"
                    f"  - {{name: j, model: 4B, max_model_len: {length}}}\n", encoding="utf-8")
    assert main(["cluster", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"solve cluster: error: {path}: {message}\n"


def capped(instance: dict, rng: random.Random) -> dict:
    """`instance` with a cap on each at_least job: its least plus 0 to 40 steps of 1024 tokens (a whole number of
    steps: no length below the cap gains as much as it)."""
    for job in instance["jobs"]:
        if isinstance(job["max_model_len"], dict):
            job["max_model_len"]["at_most"] = job["max_model_len"]["at_least"] + 1024 * rng.randint(0, 40)
    return instance


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10_000), minimize_nodes=st.booleans(), estimates=st.booleans(),
       idle=st.booleans())
def test_capped_random_instances_reach_the_brute_force_optimum(seed: int, minimize_nodes: bool, estimates: bool,
                                                               idle: bool, tmp_path_factory):
    rng = random.Random(seed)
    instance = capped((random_idle_instance if idle else random_instance)(rng), rng)
    reaches_the_optimum_then_widens(instance, tmp_path_factory.mktemp("fleet"), minimize_nodes, estimates)


@pytest.mark.parametrize("minimize_nodes", [False, True])
def test_thin_stretches_reach_the_brute_force_optimum(tmp_path: Path, minimize_nodes: bool):
    # Beside a job of 2 GPUs, and with the rollout on whole nodes, so that widening is weighed too.
    instance = moe_64k({"at_least": 65536})
    instance["jobs"].append({"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1})
    reaches_the_optimum_then_widens(instance, tmp_path, minimize_nodes, True)
