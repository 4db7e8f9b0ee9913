"""`solve cluster`'s loose ends (session 74): an `at_least` job that stops at its model's validated length though a
plan reaches further says so in its table's legend (`stopped_at_validated`); a running job kept on a trainer GPU count
its ways do not take says so (`count-kept`; since s75 with the wider way the idle GPUs beside it would give it);
the SP-over-PCIe caution of two jobs of different lengths and budgets is each one's own; a fleet whose jobs fit no
pool's room together names the fleet's packing, not one pool's; and `--buy` no longer buys more than the exact host
needs take where they were rounded on the bound's nodes. Every placement is checked with tests/cluster_reference.py's
`check_placements`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_api import buy, place
from cluster_reference import best_value, check_placements
from conftest import planner_answers_shared

from solver.cluster.options import Planner, fleet_options
from solver.tables import load_catalog, load_fleet, load_weights


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


CATALOG = load_catalog()

Cli = Callable[..., tuple[int, str, str]]


def _written(tmp_path: Path, instance: dict[str, Any], name: str = "fleet") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


def _checked(cli: Cli, instance: dict[str, Any], path: Path, *flags: str, estimates: bool = True,
             token_budget: str = "default") -> dict[str, Any]:
    """`solve cluster --json` of the instance written at `path`, its placements checked by the reference."""
    status, out, _ = cli("cluster", str(path), "--json", *flags)
    result = json.loads(out)
    assert status in (0, 1)
    assert check_placements(CATALOG, instance, result, estimates=estimates, token_budget=token_budget) == []
    return result


MOE = {"pools": [{"name": "h20", "gpu": "H20-96GB", "nodes": 2, "gpus_per_node": 8}],
       "jobs": [{"name": "moe", "model": "Qwen3-30B-A3B", "max_model_len": {"at_least": 65536}, "rollout_gpus": 0}]}
"""Qwen3-30B-A3B on 16 H20s: its plan there reaches far past the 131072 tokens YaRN is validated for."""

STOPS = "moe stops at 131072, as far as YaRN is validated for Qwen3-30B-A3B, though a plan reaches further"


def _unwrapped(text: str) -> str:
    """The command's text with its lines joined by single spaces, as its wrapped notes read."""
    return " ".join(text.split())


def test_an_at_least_job_stopped_at_the_validated_length_says_so_in_the_legend(cli: Cli, tmp_path: Path):
    # Before, the legend said only "longer where a plan allows", though solve --maximize len reaches 258048 with
    # 8 rollout GPUs on these GPUs (more on all 16).
    path = _written(tmp_path, MOE)
    result = _checked(cli, MOE, path)
    placed = result["placements"][0]
    assert (placed["plan"]["max_model_len"], placed["stopped_at_validated"]) == (131072, True)
    assert placed["plan"]["rope_scaling_factor"] == 3.2
    status, text, _ = cli("cluster", str(path))
    assert status == 0 and (
        f"(≥N): the job asked for at_least N tokens, longer where a plan allows; {STOPS}") in _unwrapped(text)
    # The planner's longest there, with no ceiling: past 131072, so the ceiling is what stopped it.
    planner = Planner(CATALOG, load_weights(), "auto")
    job = load_fleet(path, CATALOG).jobs[0]
    longest = planner.best("H20-96GB", "Qwen3-30B-A3B", 16, None, 8, "auto", None, None, job.training)
    assert longest is not None and longest.max_model_len > 131072


def test_an_at_most_above_the_validated_length_says_so_in_its_own_line(cli: Cli, tmp_path: Path):
    capped = {**MOE, "jobs": [{**MOE["jobs"][0], "max_model_len": {"at_least": 65536, "at_most": 200000}}]}
    path = _written(tmp_path, capped)
    assert _checked(cli, capped, path)["placements"][0]["stopped_at_validated"] is True
    text = cli("cluster", str(path))[1]
    assert ("(N..M): the job asked for at_least N tokens and at_most M, longer where a plan allows, up to M; "
            f"{STOPS}") in _unwrapped(text)
    assert "(≥N)" not in text


def test_a_stretch_stopped_short_of_the_validated_length_says_nothing_more(cli: Cli, tmp_path: Path):
    # docs/examples/stretch.yaml: moe-64k stops at 124928 for thin headroom, chat-14b at its at_most of 81920.
    example = Path(__file__).parent.parent / "docs" / "examples" / "stretch.yaml"
    instance = yaml.safe_load(example.read_text(encoding="utf-8"))
    instance["jobs"][0]["max_model_len"] = {"at_least": 65536}  # 64k, as the reference reads lengths
    instance["jobs"][1]["max_model_len"] = {"at_least": 65536, "at_most": 81920}
    path = _written(tmp_path, instance)
    result = _checked(cli, instance, path)
    assert [placed["plan"]["max_model_len"] for placed in result["placements"]] == [124928, 81920]
    assert [placed.get("stopped_at_validated") for placed in result["placements"]] == [None, None]
    assert "stops at" not in cli("cluster", str(path))[1]


ONE_JOB = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                     {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
           "jobs": [{"name": "j", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 2}]}
"""A job the placement puts on 6 trainer GPUs of the H20 node (its ways there take 1, 2, 4 or 6)."""


def _running(cli: Cli, tmp_path: Path, **changes: Any) -> tuple[Path, Path]:
    """ONE_JOB's file, and its placement with the job's placement changed (`plan` keys inside its plan)."""
    path = _written(tmp_path, ONE_JOB)
    now = json.loads(cli("cluster", str(path), "--json")[1])
    placed = now["placements"][0]
    assert (placed["pool"], placed["trainer_gpus"]) == ("h20", 6)
    placed["plan"].update(changes.pop("plan", {}))
    placed.update(changes)
    running = tmp_path / "now.json"
    running.write_text(json.dumps(now), encoding="utf-8")
    return path, running


def _stays(result: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(p["job"], p["current"], p["trainer_gpus"], p.get("stay_reason_code"), p.get("stay_reason"))
            for p in result["placements"]]


def test_a_job_kept_on_a_count_its_ways_do_not_take_says_so(cli: Cli, tmp_path: Path):
    # Started by hand on 3 trainer GPUs: a way at 3 is added so that it can stay, and it does. Before, it read
    # `stays` with no word, though no way of its at 3 is the planner's.
    path, running = _running(cli, tmp_path, trainer_gpus=3, gpu_indexes=[0, 1, 2, 3, 4])
    # Since s75 it also names the wider way that the node's 3 idle GPUs would give it (a100's idle node would run it
    # on 6 GPUs too, but no cheaper than that: no pool is named).
    why = ("its trainer GPU count is kept as it runs (3 trainer GPUs; its other ways in pool h20 take 1, 2, 4 or 6); "
           "the 3 idle GPUs beside it on its node would grow it to 6 trainer GPUs (vanilla, cost 0.1667, not 0.3333), "
           "which would restart it")
    result = _checked(cli, ONE_JOB, path, "--current", str(running))
    assert _stays(result) == [("j", "stays", 3, "count-kept", why)]
    status, text, _ = cli("cluster", str(path), "--current", str(running))
    assert status == 0 and f"stays: j: {why}" in _unwrapped(text)


def test_a_job_kept_on_its_own_count_and_settings_names_both(cli: Cli, tmp_path: Path):
    path, running = _running(cli, tmp_path, trainer_gpus=3, gpu_indexes=[0, 1, 2, 3, 4], plan={"offload": True})
    result = _checked(cli, ONE_JOB, path, "--current", str(running))
    assert _stays(result) == [("j", "stays", 3, "count-kept", (
        "its trainer GPU count and settings are kept as they run (SP=1 with Offload at 8192 tokens on 3 trainer GPUs; "
        "its other ways in pool h20 take 1, 2, 4 or 6; the planner's cheapest way on 3 trainer GPUs: vanilla); the 3 "
        "idle GPUs beside it on its node would grow it to 6 trainer GPUs (vanilla, cost 0.1667, not 0.6667), which "
        "would restart it"))]


def test_a_job_kept_in_its_pool_says_what_the_idle_gpus_beside_it_would_give(cli: Cli, tmp_path: Path):
    # On 4 trainer GPUs of the A100 node, a count its ways there take: it stays (a running job moves for priority
    # alone), where without --current it runs on 6 H20s. Before s75 it said nothing; now it names the 6 GPUs the
    # node's 2 idle ones would grow it to (the H20 node would run it no cheaper than that: no pool is named).
    path, running = _running(cli, tmp_path, pool="a100", trainer_gpus=4, gpu_indexes=[0, 1, 2, 3, 4, 5])
    result = _checked(cli, ONE_JOB, path, "--current", str(running))
    why = ("its trainer GPU count is kept as it runs (4 trainer GPUs); the 2 idle GPUs beside it on its node would "
           "grow it to 6 trainer GPUs (vanilla, cost 0.1667, not 0.25), which would restart it")
    assert _stays(result) == [("j", "stays", 4, "count-kept", why)]
    assert f"stays: j: {why}" in _unwrapped(cli("cluster", str(path), "--current", str(running))[1])


PCIE = {"pools": [{"name": "lab", "gpu": "L40S-48GB", "nodes": 2, "gpus_per_node": 4}],
        "jobs": [{"name": "short", "model": "Qwen3-4B", "max_model_len": 16384, "rollout_gpus": 0},
                 {"name": "long", "model": "Qwen3-4B", "max_model_len": 81920, "rollout_gpus": 0}]}
"""Two jobs of different lengths on L40S cards, which reach one another over PCIe: at Trinity's default budget short
takes SP=2 on 8 GPUs (SP=1 does not fit there) and long fits nowhere; with --token-budget auto each gets its own
lowered budget (17408 with SP=1 on 4 GPUs, 28672 with SP=4 on 4)."""


def _sp_one_trains(cli: Cli, gpus: int, length: int, *flags: str) -> bool:
    """Whether `solve` has a plan with SP 1 for Qwen3-4B at `length` on exactly `gpus` of PCIE's cards."""
    status, out, _ = cli("--model", "Qwen3-4B", "--gpu", "L40S-48GB", "--node-gpus", "4", "--gpus", str(gpus),
                         "--exact", "--sp", "1", "--len", str(length), "--json", *flags)
    assert status in (0, 1)
    [answer] = json.loads(out)  # one GPU type asked
    return answer["status"] == "optimal"


def test_the_sp_over_pcie_caution_is_each_jobs_own(cli: Cli, tmp_path: Path):
    # Each SP plan's caution says no plan without SP fits its own length at its own budget, as solve --sp 1 finds
    # (with --token-budget auto where the run has it): judged per job, not at one length or budget for all.
    path = _written(tmp_path, PCIE)
    plain = _checked(cli, PCIE, path)
    auto = _checked(cli, PCIE, path, "--token-budget", "auto", token_budget="auto")
    none_fits = ("no plan without SP fits {} tokens here: SP over PCIe is what trains this length, so time a step "
                 "before a long run")
    lowered_fits = ("no plan without SP fits {} tokens here at Trinity's default token budget, but one with a lowered "
                    "budget does (solve --sp 1 with --token-budget auto): it may train faster, so time a step of each")
    for result, flags in ((plain, ()), (auto, ("--token-budget", "auto"))):
        for placed in result["placements"]:
            plan = placed["plan"]
            cautions = dict(zip(plan["caution_codes"], plan["cautions"], strict=True))
            if plan["sp"] == 1:
                assert "sp-over-pcie" not in cautions
                continue
            assert not _sp_one_trains(cli, plan["gpus"], plan["max_model_len"], *flags)
            # s93: at the default budget, the words name --token-budget auto where SP=1 trains with it
            lowered = not flags and _sp_one_trains(cli, plan["gpus"], plan["max_model_len"], "--token-budget", "auto")
            assert cautions["sp-over-pcie"].endswith((lowered_fits if lowered else none_fits).format(
                plan["max_model_len"]))
    shapes = {(result_name, p["job"], p["plan"]["sp"], p["plan"]["gpus"], p["plan"]["max_token_len_per_gpu"])
              for result_name, result in (("plain", plain), ("auto", auto)) for p in result["placements"]}
    assert shapes == {("plain", "short", 2, 8, 16384), ("auto", "short", 1, 4, 17408), ("auto", "long", 4, 4, 28672)}
    # Trinity's default budget gives SP=1 no plan at 16384 on 8 GPUs; --token-budget auto does, as the caution
    # judged at each run's budget says (and, at the default budget, names).
    assert _sp_one_trains(cli, 8, 16384, "--token-budget", "auto")
    [short] = [placed["plan"] for placed in plain["placements"] if placed["job"] == "short"]
    assert short["cautions"][short["caution_codes"].index("sp-over-pcie")].endswith(lowered_fits.format(16384))


PACKED_ACROSS = {"pools": [{"name": "a", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                           {"name": "b", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8}],
                 "jobs": [{"name": "a1", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 5, "pool": "a",
                           "required": True},
                          {"name": "b1", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 5, "pool": "b",
                           "required": True},
                          {"name": "x", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 3,
                           "required": True}]}
"""a1 and b1 fit their own pools alone (6 of 8 GPUs each at the fewest); x, which may use either, needs 4: the
packing across the pools, not pool a's, leaves no placement."""


def test_jobs_that_fit_their_pools_alone_are_told_the_fleets_packing(cli: Cli, tmp_path: Path):
    # Before: "the job only pool a can run (a1) takes at its fewest 6 of its 8 GPUs, but their layouts do not pack
    # into the nodes", as though pool a could not hold a1.
    path = _written(tmp_path, PACKED_ACROSS)
    result = _checked(cli, PACKED_ACROSS, path)
    assert result["status"] == "infeasible" and {entry["reason"] for entry in result["unplaced"]} == {(
        "the required jobs (a1, b1, x) do not all fit the fleet together: at their fewest they take 16 of the fleet's "
        "16 GPUs (the job only pool a can run (a1) takes 6 of its 8), but their layouts do not pack into the nodes; "
        "--buy names the nodes to add for them")}
    # The reference agrees: no placement of all three; a1 alone, or with b1, has one.
    assert best_value(CATALOG, PACKED_ACROSS, minimize_nodes=True) is None
    assert best_value(CATALOG, {**PACKED_ACROSS, "jobs": PACKED_ACROSS["jobs"][:2]}, minimize_nodes=True) is not None


def _host_bound_fleet(nodes: int) -> dict[str, Any]:
    """Eight required jobs of Qwen3 0.6B to 8B on `nodes` nodes of 16 A100s with 136 GB of host memory each (128 before
    s84, where the untied 8B loaded on rank 0 alone; with no release named each of its ranks loads it, and 128 runs no
    8B job at 8192 tokens)."""
    models = ["Qwen3-0.6B", "Qwen3-1.7B", "Qwen3-4B", "Qwen3-8B"] * 2
    return {"pools": [{"name": "p", "gpu": "A100-80GB", "nodes": nodes, "gpus_per_node": 16, "host_ram_gb": 136}],
            "jobs": [{"name": f"j{index}", "model": model, "max_model_len": 8192, "rollout_gpus": 0,
                      "required": True} for index, model in enumerate(models)]}


def test_buy_asks_again_where_the_bounds_nodes_rounded_the_host_needs(tmp_path: Path):
    # The purchase's bound raises the pool to 8 nodes, on which the host needs round up (3 or 4 nodes do not round
    # them); before, --buy bought more nodes, feasible, than place every job. Now it buys 4, optimal (3 when the 8B
    # loaded on rank 0 alone, s84).
    planner = Planner(CATALOG, load_weights(), "auto")
    rounded = [fleet_options(planner, load_fleet(_written(tmp_path, _host_bound_fleet(nodes), f"n{nodes}"),
                                                 CATALOG)).host_rounded for nodes in (3, 4, 8)]
    assert rounded == [(), (), ("p",)]
    purchase = json.loads(buy(load_fleet(_written(tmp_path, _host_bound_fleet(0)), CATALOG), catalog=CATALOG,
                              time_limit_s=60).model_dump_json())
    assert (purchase["status"], purchase["gpus"], purchase["nodes"], purchase["host_rounded"]) == (
        "optimal", 64, 4, [])
    bought = _host_bound_fleet(4)
    as_placed = {"placements": purchase["placements"], "unplaced": []}
    assert check_placements(CATALOG, bought, as_placed, minimize_nodes=True, estimates=True) == []
    placed = json.loads(place(load_fleet(_written(tmp_path, bought, "bought"), CATALOG), catalog=CATALOG,
                              minimize="nodes", time_limit_s=60).model_dump_json())
    assert placed["status"] == "optimal"
    assert check_placements(CATALOG, bought, placed, minimize_nodes=True, estimates=True) == []
    # The reference: 3 nodes hold them not (no purchase of fewer GPUs places them).
    assert best_value(CATALOG, _host_bound_fleet(3), minimize_nodes=True, estimates=True) is None
