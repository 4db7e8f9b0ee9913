"""`solve cluster` jobs with a PPO critic (session 74): a job's ``critic`` (none, resident, offloaded, reloaded; none by
default) is counted in its plans as ``--critic`` counts it for `solve` (estimates alone, its states on the GPUs or in
host memory), shown in the pool tables' training column and in the JSON, written into ``--emit-dir``'s configs (the
critic's offload keys; the check command's ``--critic none`` only for jobs without one), and taken by the API's
`place` and `buy_nodes`; a bad value is refused naming the job, the field and the values. Every placement is checked
with tests/cluster_reference.py's `check_placements`, which counts the critic, and its value is the reference's
optimum."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from cluster_api import buy, place
from cluster_reference import best_value, check_placements, random_instance, value_of
from test_cluster import reaches_the_optimum_then_widens

from solver.tables import CRITIC_STATES, Fleet, load_catalog, load_fleet

CATALOG = load_catalog()

Cli = Callable[..., tuple[int, str, str]]


def _fleet(*jobs: dict[str, Any], gpus_per_node: int = 4, host_ram_gb: float | None = None,
           nodes: int = 1) -> dict[str, Any]:
    """A fleet of one A100 pool (`nodes` of `gpus_per_node`, with `host_ram_gb` where given) and `jobs`."""
    pool: dict[str, Any] = {"name": "a100", "gpu": "A100-80GB", "nodes": nodes, "gpus_per_node": gpus_per_node}
    return {"pools": [pool if host_ram_gb is None else {**pool, "host_ram_gb": host_ram_gb}], "jobs": list(jobs)}


def _job(name: str, model: str, length: int, critic: str | None = None) -> dict[str, Any]:
    job = {"name": name, "model": model, "max_model_len": length, "rollout_gpus": 0}
    return job if critic is None else {**job, "critic": critic}


def _written(tmp_path: Path, instance: dict[str, Any], name: str = "fleet") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    return path


def _checked(cli: Cli, instance: dict[str, Any], path: Path, *flags: str) -> dict[str, Any]:
    """`solve cluster --json` of the instance written at `path`, its placements checked by the reference, and its
    value the reference's optimum."""
    status, out, _ = cli("cluster", str(path), "--json", *flags)
    result = json.loads(out)
    assert status in (0, 1)
    assert check_placements(CATALOG, instance, result, estimates=True) == []
    assert value_of(CATALOG, instance, result) == best_value(CATALOG, instance, estimates=True)
    return result


def _plan_of(result: dict[str, Any], job: str) -> tuple[object, ...]:
    """A placed job's trainer GPUs, setting, evidence, cost, host need and critic."""
    placed = next(placement for placement in result["placements"] if placement["job"] == job)
    plan = placed["plan"]
    return (placed["trainer_gpus"], plan["env"], plan["offload"], plan["sp"], plan["evidence"], plan["cost"],
            plan["host_memory_gb"], plan["critic"])


def test_a_resident_critic_moves_a_job_that_fits_4_gpus_plain_to_an_estimate_with_env(cli: Cli, tmp_path: Path):
    # Qwen3-4B at 16384 on 4 A100s: the tables document it plain; a resident critic's states (12 bytes per parameter
    # of the critic beside the actor, its gradients freed after its own update, sharded) leave no cell to vouch and
    # take Env to fit (70.05 GiB of 73.5; s74: Env + SP=2 with its gradients counted).
    alone = _fleet(_job("math-4b", "Qwen3-4B", 16384), host_ram_gb=512)
    assert _plan_of(_checked(cli, alone, _written(tmp_path, alone, "alone")), "math-4b") == (
        4, False, False, 1, "documented", 0.25, 81.1, None)
    resident = _fleet(_job("math-4b", "Qwen3-4B", 16384, "resident"), host_ram_gb=512)
    result = _checked(cli, resident, _written(tmp_path, resident, "resident"))
    # The cost counts the critic's work (s76): (1/4) x (1 + 1) x 1.01.
    assert _plan_of(result, "math-4b") == (4, True, False, 1, "estimated", 0.505, 81.1, "resident")
    assert result["placements"][0]["plan"]["memory_gb"] == 70.05
    # Offloaded or reloaded, the critic's states are in host memory (93.4 GiB, not 81.1; reloaded, its gradients freed
    # before it offloads, 84.5: s90) and Env alone fits; its cost counts Offload's weight for them: (1/4) x (1 + 1 x 2)
    # x 1.01.
    for critic, host in (("offloaded", 93.4), ("reloaded", 84.5)):
        held = _fleet(_job("math-4b", "Qwen3-4B", 16384, critic), host_ram_gb=512)
        assert _plan_of(_checked(cli, held, _written(tmp_path, held, critic)), "math-4b") == (
            4, True, False, 1, "estimated", 0.7575, host, critic)


def test_the_training_column_names_the_critic_and_only_where_a_job_trains_one(cli: Cli, tmp_path: Path):
    status, text, _ = cli("cluster", str(_written(tmp_path, _fleet(_job("math-4b", "Qwen3-4B", 16384)))))
    assert status == 0 and "training" not in text
    status, text, _ = cli("cluster", str(_written(tmp_path, _fleet(_job("math-4b", "Qwen3-4B", 16384, "offloaded")))))
    assert status == 0
    row = next(line for line in text.splitlines() if "math-4b" in line)
    assert "│ full, ref, critic offloaded │" in row
    assert ("critic resident, offloaded or reloaded: the PPO critic it trains beside the actor (the job's critic), "
            "where the critic keeps its states") in " ".join(text.split())


def test_an_offloaded_critic_s_host_memory_reshapes_the_shared_node(cli: Cli, tmp_path: Path):
    # Two Qwen3-4B jobs on one node of 8 A100s with 170 GiB of host memory: 4 GPUs each, 81.1 GiB each, fit. With an
    # offloaded critic, 4 GPUs need 93.4 GiB, over what the other leaves (88.9). Before s76 the job took 3 GPUs (77.5
    # GiB; costs 0.3367 + 0.25); now that its cost counts the critic (three times its step without one), it takes 6
    # (105.8 GiB) and leaves the other 2 with Env (51.1 GiB): 0.505 + 0.505, less than 3 and 4's 1.01 + 0.25.
    plain = _fleet(_job("math-4b", "Qwen3-4B", 16384), _job("code-4b", "Qwen3-4B", 16384), gpus_per_node=8,
                   host_ram_gb=170)
    before = _checked(cli, plain, _written(tmp_path, plain, "plain"))
    assert [_plan_of(before, job) for job in ("math-4b", "code-4b")] == [(4, False, False, 1, "documented", 0.25,
                                                                          81.1, None)] * 2
    critic = {**plain, "jobs": [{**plain["jobs"][0], "critic": "offloaded"}, plain["jobs"][1]]}
    after = _checked(cli, critic, _written(tmp_path, critic, "critic"))
    assert _plan_of(after, "math-4b") == (6, True, False, 1, "estimated", 0.505, 105.8, "offloaded")
    assert _plan_of(after, "code-4b") == (2, True, False, 1, "documented", 0.505, 51.1, None)
    assert [placed["host_memory_gb"] for placed in after["placements"]] == [105.8, 51.1]
    # The reference counts the critic: the same placement read as of jobs without one is wrong.
    assert check_placements(CATALOG, plain, after, estimates=True) != []
    assert check_placements(CATALOG, critic, before, estimates=True) != []


def test_a_job_left_out_gives_its_critic_in_the_json_and_the_table(cli: Cli, tmp_path: Path):
    # Qwen3-8B at 81920 with a resident critic: 4 A100s reach 70656 tokens at most (Env + Offload + SP=4).
    instance = _fleet(_job("long-8b", "Qwen3-8B", 81920, "resident"), _job("math-4b", "Qwen3-4B", 16384))
    path = _written(tmp_path, instance)
    result = _checked(cli, instance, path)
    [unplaced] = result["unplaced"]
    assert (unplaced["job"], unplaced["reason_code"], unplaced["lora_rank"], unplaced["reference_model"],
            unplaced["critic"]) == ("long-8b", "no-way-to-run", 0, True, "resident")
    assert "the longest is 70656 on the 1024-token grid (Env + Offload + SP=4 on 4 GPUs, estimated)" in (
        unplaced["reason"])
    assert result["placements"][0]["plan"]["critic"] is None  # math-4b's
    status, text, _ = cli("cluster", str(path))
    assert status == 1 and "│ long-8b │ full, ref, critic resident │" in text
    # Without the critic, the job and its JSON as before: no critic, lora_rank or reference_model keys.
    without = _fleet(_job("long-8b", "Qwen3-8B", 131072), _job("math-4b", "Qwen3-4B", 16384))
    [left] = _checked(cli, without, _written(tmp_path, without, "without"))["unplaced"]
    assert {"critic", "lora_rank", "reference_model"}.isdisjoint(left)


def test_a_job_left_out_names_the_critic_choice_that_fits_by_the_job_s_key(cli: Cli, tmp_path: Path):
    # fleetunit91: the reasons named another critic choice as solve's flag (--critic resident), which solve cluster
    # refuses; a job gives it by its critic key.
    held = _fleet(_job("ppo", "Qwen3-1.7B", 4096, "offloaded"), gpus_per_node=1, host_ram_gb=32)
    [left] = json.loads(cli("cluster", str(_written(tmp_path, held)), "--json")[1])["unplaced"]
    assert left["reason"].endswith(
        "it needs 38.6 GiB of host memory per node for the critic's offloaded states; with the job's critic resident, "
        "Env on 1 GPU trains it (4096 tokens), and it needs 15.0 GiB of host memory per node while the model loads")
    reloaded = _fleet(_job("ppo", "Qwen3-32B", 32768, "reloaded"), gpus_per_node=2)
    [left] = json.loads(cli("cluster", str(_written(tmp_path, reloaded)), "--json")[1])["unplaced"]
    assert ("nothing fits (not even 1024 tokens); with the job's critic offloaded (its states in host memory "
            "throughout), Env + Offload + SP=2 on 2 GPUs trains 32768 tokens") in left["reason"]


def test_a_bad_critic_is_refused_naming_the_job_the_field_and_the_values(cli: Cli, tmp_path: Path):
    path = _written(tmp_path, _fleet(_job("math-4b", "Qwen3-4B", 16384, "residnet")))
    status, out, err = cli("cluster", str(path))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {path}: line 2: job math-4b, critic: must be 'none', 'resident', "
                   "'offloaded' or 'reloaded', got 'residnet'; did you mean 'resident'?\n")
    status, _, err = cli("cluster", str(_written(tmp_path, _fleet(_job("a", "Qwen3-4B", 16384)), "ok")),
                         "--critic", "resident")
    assert status == 2 and err.endswith("solve cluster: error: --critic is an option of solve, solve memory and "
                                        "solve map, not of solve cluster (the file gives it: a job's critic)\n")


def test_emit_dir_writes_the_critic_s_keys_and_checks_with_critic_none_only_without_one(cli: Cli, tmp_path: Path):
    instance = _fleet(_job("math-4b", "Qwen3-4B", 16384, "offloaded"), _job("code-4b", "Qwen3-4B", 16384),
                      gpus_per_node=8)
    out = tmp_path / "configs"
    status, _, _ = cli("cluster", str(_written(tmp_path, instance)), "--emit-dir", str(out))
    assert status == 0
    critic, plain = (yaml.safe_load((out / f"{job}.yaml").read_text(encoding="utf-8"))
                     for job in ("math-4b", "code-4b"))
    held = {"param_offload": True, "optimizer_offload": True, "offload_policy": True}
    assert critic["trainer"]["trainer_config"]["critic"]["model"]["fsdp_config"] == held
    assert critic["trainer"]["trainer_config"]["critic"]["fsdp"] == held
    assert critic["trainer"]["trainer_config"]["critic"]["strategy"] == "fsdp2"
    assert "critic" not in plain["trainer"].get("trainer_config", {})
    checks = {job: next(line for line in (out / f"{job}.yaml").read_text(encoding="utf-8").splitlines()
                        if "solve --from-config" in line) for job in ("math-4b", "code-4b")}
    assert checks["math-4b"].endswith("solve --from-config CONFIG --check --gpu A100-80GB")
    assert checks["code-4b"].endswith("solve --from-config CONFIG --check --gpu A100-80GB --critic none")


def test_the_api_s_place_and_buy_nodes_take_a_job_s_critic(tmp_path: Path):
    instance = _fleet(_job("long-8b", "Qwen3-8B", 81920, "resident"), _job("math-4b", "Qwen3-4B", 16384))
    fleet = load_fleet(_written(tmp_path, instance), CATALOG)
    assert fleet.jobs[0].training.critic == "resident" and fleet.jobs[1].training.critic is None
    # A Fleet built in code: a Job with critic= as the file's field.
    without = Fleet(pools=fleet.pools, jobs=(fleet.jobs[0].model_copy(update={"critic": "none"}), fleet.jobs[1]))
    assert [job.job for job in place(fleet).unplaced] == ["long-8b"]
    assert [job.critic for job in place(fleet).unplaced] == ["resident"]
    assert place(without).unplaced[0].critic is None
    # To place both: 2 nodes of 4 with the critic (Env + Offload + SP=4 on 8 GPUs), 1 without.
    bought, plain = buy(fleet), buy(without)
    assert (bought.gpus, bought.nodes, plain.gpus, plain.nodes) == (8, 2, 4, 1)
    placed = {placement.job: placement.plan for placement in bought.placements}
    assert (placed["long-8b"].gpus, placed["long-8b"].setting.label, placed["long-8b"].critic) == (
        8, "Env + Offload + SP=4", "resident")
    assert placed["math-4b"].critic is None


@pytest.mark.parametrize("seed", range(6))
def test_random_fleets_with_critics_reach_the_brute_force_optimum_then_widen(seed: int, tmp_path: Path):
    # tests/cluster_reference.py's tiny random fleets, each job with a critic or none: the placement (unwidened and
    # widened) is checked by the reference, which counts each job's critic, and reaches its optimum.
    rng = random.Random(7400 + seed)
    instance = random_instance(rng)
    for job in instance["jobs"]:
        job["critic"] = rng.choice(("none", *CRITIC_STATES))
    reaches_the_optimum_then_widens(instance, tmp_path, minimize_nodes=False, estimates=True)
