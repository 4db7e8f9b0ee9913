"""Small slips s76's reviews left (helper smallslips22): ``solve cluster --current`` tells a job running in a pool
now out of service (``nodes: 0``) to stop, or to move, naming the pool's zero nodes; a ``--current`` file's wrong
value is refused in the fleet file's one-line form."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from test_cluster import reference_checked

import solver
from solver import load_weights
from solver.cluster.options import Planner, as_it_runs_ways, job_options, running_count_ways, running_ways
from solver.tables import current_jobs, load_catalog, load_fleet
from solver.trinity import load_config_mapping, trinity_config_problems

Cli = Callable[..., tuple[int, str, str]]

CATALOG = load_catalog()

UP = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 1, "gpus_per_node": 8},
                {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}],
      "jobs": [{"name": "small", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2, "pool": "a100"},
               {"name": "pinned", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2, "pool": "h20"},
               {"name": "free", "model": "Qwen3-4B", "max_model_len": 8192, "rollout_gpus": 2, "pool": "h20"}]}
"""An A100 node running `small`, and an H20 node running `pinned` and `free` (each job pinned to its pool)."""


def _write(path: Path, fleet: dict) -> Path:
    path.write_text(yaml.safe_dump(fleet), encoding="utf-8")
    return path


def _down(fleet: dict) -> dict:
    """`fleet` with its H20 pool taken out of service (nodes: 0), and `small` and `free` free to use either pool."""
    pools = [{**pool, "nodes": 0} if pool["name"] == "h20" else pool for pool in fleet["pools"]]
    jobs = [{key: value for key, value in job.items() if job["name"] == "pinned" or key != "pool"}
            for job in fleet["jobs"]]
    return {"pools": pools, "jobs": jobs}


def test_a_job_running_in_a_pool_now_of_no_nodes_stops_or_moves_saying_so(cli: Cli, tmp_path: Path):
    # Before, read_current skipped a placement whose pool has nodes: 0 (its node "no longer there"): pinned and free,
    # which run there now, were not running (`current` left out, "0 stop"), though they run and must stop.
    placed = cli("cluster", str(_write(tmp_path / "up.yaml", UP)), "--json")[1]
    assert {p["job"]: p["pool"] for p in json.loads(placed)["placements"]} == {
        "small": "a100", "pinned": "h20", "free": "h20"}
    current = tmp_path / "now.json"
    current.write_text(placed, encoding="utf-8")
    down = _write(tmp_path / "down.yaml", _down(UP))
    status, out, _ = cli("cluster", str(down), "--current", str(current), "--json")
    answer = json.loads(out)
    assert status == 1
    assert [(p["job"], p["pool"], p["current"], p.get("move_reason_code"), p.get("move_reason"))
            for p in answer["placements"]] == [
        ("small", "a100", "moves", "more-priority",
         "keeping it where it runs places less priority than this placement (2); its GPUs now run free (priority 1)"),
        ("free", "a100", "moves", "pool-no-nodes", "pool h20, where it runs, has no nodes now (nodes: 0)")]
    (left_out,) = answer["unplaced"]
    assert (left_out["job"], left_out["current"], left_out["reason_code"], left_out["reason"]) == (
        "pinned", "stops", "no-way-to-run", "h20: the pool has no nodes now (nodes: 0)")
    lines = cli("cluster", str(down), "--current", str(current))[1].splitlines()
    assert lines[1] == "running now: 0 stay, 2 move, 1 stops; 0 start"
    assert ("moves: free: it runs on node 0 of pool h20 (GPUs 4-7) now, "
            "and restarts as placed: pool h20, where it runs, has no "
            "nodes now (nodes: 0)") in lines


def test_jobs_pinned_to_a_pool_now_of_no_nodes_stop_with_its_reason(cli: Cli, tmp_path: Path):
    placed = cli("cluster", str(_write(tmp_path / "up.yaml", UP)), "--json")[1]
    current = tmp_path / "now.json"
    current.write_text(placed, encoding="utf-8")
    pinned = {**UP, "pools": _down(UP)["pools"]}
    status, out, _ = cli("cluster", str(_write(tmp_path / "down.yaml", pinned)), "--current", str(current))
    lines = out.splitlines()
    assert status == 1
    assert lines[1] == "running now: 1 stays, 0 move, 2 stop; 0 start"
    assert "│ pinned (stops), free (stops) │ h20: the pool has no nodes now (nodes: 0) │" in lines


def test_a_job_running_in_a_pool_of_no_nodes_gets_no_way_there_to_stay(cli: Cli, tmp_path: Path):
    # The ways a running job gets to stay as it runs (at its count, with its settings, or alone where the time limit
    # cut its ways short) are none in a pool of no nodes, as the job's own ways: nothing runs there now.
    placed = cli("cluster", str(_write(tmp_path / "up.yaml", UP)), "--json")[1]
    for nodes, ways in ((1, 1), (0, 0)):
        fleet = load_fleet(_write(tmp_path / f"h20-{nodes}.yaml", {
            **UP, "pools": [{**pool, "nodes": nodes} if pool["name"] == "h20" else pool for pool in UP["pools"]]}))
        planner = Planner(CATALOG.for_fleet(fleet), load_weights(), "auto")
        free = next(job for job in current_jobs(json.loads(placed), "now.json", fleet, 1) if job.job == 2)
        as_it_runs = free._replace(sp=2)  # settings the planner would not pick: only its own way keeps it
        offered = job_options(planner, fleet, 2)
        assert (len(offered), len(running_count_ways(planner, fleet, as_it_runs, [])),
                len(as_it_runs_ways(planner, fleet, as_it_runs)),
                len(running_ways(planner, fleet, as_it_runs, offered))) == (ways * 4, ways, ways, ways)


@pytest.mark.parametrize(("change", "problem"), [
    (lambda placed: placed.update(trainer_gpus="six"), "job small, trainer_gpus: must be a whole number, got 'six'"),
    (lambda placed: placed["plan"].update(offload="maybe"),
     "job small, plan, offload: must be true or false, got 'maybe'"),
    (lambda placed: placed["plan"].update(critic="big"),
     "job small, plan, critic: must be 'resident', 'offloaded' or 'reloaded', got 'big'"),
    (lambda placed: placed.update(nodes=["0"]), "job small, nodes item 1: must be a whole number, got '0'"),
    (lambda placed: placed["plan"].update(sp=0), "job small, plan, sp: must be above 0, got 0"),
    (lambda placed: placed.pop("pool"),
     ("job small: missing field 'pool' (fields: job, pool, model, nodes, gpu_indexes, trainer_gpus, rollout_gpus, "
      "plan)")),
], ids=["text-count", "word-bool", "critic", "quoted-node", "sp-0", "no-pool"])
def test_a_current_file_of_a_wrong_value_is_refused_as_a_fleet_file_is(cli: Cli, tmp_path: Path,
                                                                       change: Callable[[dict], object], problem: str):
    # Before: pydantic's words and a JSON path ("placements[0].trainer_gpus: input should be a valid integer"), in
    # JSON mode and plain. Now the one-line form of the fleet file's errors (the item by its job, what was found, what
    # the key takes), without its hints about YAML: the file is JSON.
    fleet = _write(tmp_path / "up.yaml", UP)
    placed = json.loads(cli("cluster", str(fleet), "--json")[1])
    change(placed["placements"][0])
    current = tmp_path / "now.json"
    current.write_text(json.dumps(placed), encoding="utf-8")
    for json_mode in ((), ("--json",)):
        assert cli("cluster", str(fleet), "--current", str(current), *json_mode) == (
            2, "", f"solve cluster: error: --current {current}: {problem}\n")


def test_a_fragment_for_a_release_whose_host_need_breaks_the_limit_planned_within_is_refused(tmp_path: Path):
    # Before, an answer planned for Trinity 0.5 within 60 GiB (Env + SP=2 on 8 H100s, 50.9 GiB per node) got, asked
    # for 0.6's fragment, "host memory: 71.2 GiB per node while the model loads, within host_ram_gb of 60 GiB".
    # (s84: 0.5.1 named, whose verl rule loads the untied Qwen3-8B on rank 0 alone, as 0.6 does on H100s; 0.5 without
    # its patch, and no release named, load it on every rank: 264.5 and 284.8 GiB.)
    (answer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, host_ram_gb=60.0,
                            trinity_version="0.5.1")
    def header(text: str) -> str:
        """A fragment's lines joined, its header comment's wrapped lines read as one."""
        return " ".join(line.removeprefix("# ") for line in text.splitlines())

    assert ("host memory: 50.9 GiB per node while the model loads (rank 0 loading the model), within host_ram_gb of "
            "60 GiB ") in header(solver.trinity_config(answer))
    assert solver.trinity_config(answer, version="0.5.1") == solver.trinity_config(answer)
    refused = ("the answer's plan needs 71.2 GiB of host memory per node under Trinity 0.6, more than host_ram_gb of "
               "60 GiB it was planned within (for another release): plan it again with trinity_version='0.6', or "
               "pass version= the release it was planned for")
    for make in (solver.trinity_config, solver.trinity_settings):
        with pytest.raises(solver.QueryError) as raised:
            make(answer, version="0.6")
        assert str(raised.value) == refused
    # Read back from JSON, its plan keeps its release since planjson (s78; 0.6's figure was judged there before).
    read_back = solver.Answer.model_validate_json(answer.model_dump_json())
    assert solver.trinity_config(read_back) == solver.trinity_config(answer)
    assert solver.trinity_config(read_back, version="0.5.1") == solver.trinity_config(answer)
    # 0.5.1's need is the lower: an answer planned for 0.6 gets 0.5.1's fragment.
    (newer,) = solver.plan("Qwen3-8B", gpu="h100", budget_gpus=8, max_model_len=32768, host_ram_gb=80.0,
                           trinity_version="0.6")
    assert ("host memory: 50.9 GiB per node while the model loads (rank 0 loading the model), within host_ram_gb of "
            "80 GiB ") in header(solver.trinity_config(newer, version="0.5.1"))
    fleet = _write(tmp_path / "fleet.yaml", {
        "pools": [{"name": "h", "gpu": "H100-80GB", "nodes": 1, "gpus_per_node": 8, "host_ram_gb": 60}],
        "jobs": [{"name": "j", "model": "Qwen3-8B", "max_model_len": 32768}]})
    placed = solver.place(fleet, trinity_version="0.5.1")
    reference_checked(fleet, placed.model_dump_json(), trinity_version="0.5.1")  # rank 0 loading, as 0.5.1 counts it
    assert ("host memory: 50.9 GiB per node while the model loads (rank 0 loading the model), within the pool's "
            "host_ram_gb of 60 GiB ") in header(solver.placement_configs(placed, fleet)["j"])
    for make_all in (solver.placement_configs, solver.placement_settings):
        with pytest.raises(solver.QueryError) as raised:
            make_all(placed, fleet, version="0.6")
        assert str(raised.value) == (
            "job j's plan needs 71.2 GiB of host memory per node under Trinity 0.6, more than the pool's host_ram_gb "
            "of 60 GiB it was planned within (for another release): plan it again with trinity_version='0.6', or "
            "pass version= the release it was planned for")


USER_CONFIG = (Path(__file__).parent / "data" / "trinity" / "user-config.yaml").read_text(encoding="utf-8")
"""A user's Trinity config (tests/data/trinity), where keys are added (`_with_keys`)."""


def _with_keys(added: str, after: str) -> str:
    """`USER_CONFIG` with the YAML lines `added` after the line `after`."""
    assert USER_CONFIG.count(after) == 1
    return USER_CONFIG.replace(after, after + added)


ROLLOUT_LINE, EXPLORER_LINE = "    tensor_parallel_size: 1\n", "  runner_per_model: 8\n"
EXPERT_05, PARALLEL_05 = ("Trinity 0.5's rollout engines run without expert parallelism",
                          "Trinity 0.5 takes an engine's GPUs as its tensor_parallel_size")


@pytest.mark.parametrize(("added", "after", "key", "why"), [
    ("    enable_expert_parallel: maybe\n", ROLLOUT_LINE, "explorer.rollout_model.enable_expert_parallel", EXPERT_05),
    ("    data_parallel_size: two\n", ROLLOUT_LINE, "explorer.rollout_model.data_parallel_size", PARALLEL_05),
    ("  auxiliary_models:\n  - model_path: /models/judge\n    enable_expert_parallel: maybe\n", EXPLORER_LINE,
     "explorer.auxiliary_models[0].enable_expert_parallel", EXPERT_05),
], ids=["flag", "count", "auxiliary-flag"])
def test_a_wrong_typed_key_trinity_05_lacks_gets_the_one_line_of_its_lack(added: str, after: str, key: str, why: str):
    # Before, with version 0.5 a second line said its type ("... must be true or false, got 'maybe': every Trinity
    # release refuses the config as it loads it"), though 0.5 refuses the key whatever its value.
    mapping = load_config_mapping(_with_keys(added, after), "config.yaml")
    name = key.rsplit(".", 1)[1]
    said = {version: [(problem.code.value, problem.words)
                      for problem in trinity_config_problems(mapping, CATALOG.model("Qwen3-0.6B"), 6, version=version,
                                                             environ={"FACTOR": "4"}) if name in problem.words]
            for version in ("0.5", "0.6")}
    assert said["0.5"] == [("unknown-key-refused", (
        f"{key}: a key of Trinity 0.6's inference model, which Trinity 0.5 refuses (its InferenceModelConfig has no "
        f"such key), so the config does not load: remove it (solver.trinity.patch_trinity_config leaves it to you; "
        f"{why})"))]
    wrong = "must be true or false, got 'maybe'" if "expert" in key else "must be a whole number, got 'two'"
    field = "bool" if "expert" in key else "int"
    assert said["0.6"] == [(f"{'flag-not-boolean' if field == 'bool' else 'wrong-type'}-refused", (
        f"{key} {wrong}: every Trinity release refuses the config as it loads it (its typed config's {field} field)"))]


@pytest.mark.parametrize("version", ["0.5", "0.6", None])
def test_an_auxiliary_models_misspelt_key_is_looked_for_as_the_rollout_models(version: str | None):
    # Before, the rollout model's tensor_paralel_size got "did you mean tensor_parallel_size?", an auxiliary model's
    # only "no release of Trinity (0.5.0 to 0.6.0) has this key there": its engine's size read as 1, unsaid.
    config = _with_keys("  auxiliary_models:\n  - model_path: /models/judge\n    tensor_paralel_size: 2\n",
                        EXPLORER_LINE).replace(ROLLOUT_LINE, "    tensor_paralel_size: 1\n")
    said = [(problem.code.value, problem.words) for problem in trinity_config_problems(
        load_config_mapping(config, "config.yaml"), CATALOG.model("Qwen3-0.6B"), 6, version=version,
        environ={"FACTOR": "4"}) if "paralel" in problem.words]
    assert said == [("misspelt-key-refused", (
        f"explorer.{section}.tensor_paralel_size: did you mean tensor_parallel_size? That key is unset, and read as "
        "such; Trinity refuses the config (it knows no such key)")) for section in ("rollout_model",
                                                                                    "auxiliary_models[0]")]


@pytest.mark.parametrize(("critic", "options", "host"), [
    ("offloaded", (), ("172.1 GiB per node for the critic's offloaded states (the critic's states (131.5 GiB) and the "
                       "reference model's shards, or the model while it loads beside the reference model's pinned "
                       "shards, whichever is more)")),
    # s90: a reloaded critic's 12 pinned bytes a parameter, its gradients freed before it offloads (not 131.5 GiB)
    ("reloaded", ("--no-reference",), ("112.7 GiB per node for the critic's offloaded states (the critic's states "
                                       "(112.6 GiB), or the model while it loads, whichever is more; no reference "
                                       "model)")),
], ids=["offloaded", "reloaded-no-reference"])
def test_the_plans_host_memory_row_gives_the_critics_share_as_solve_memory_does(
        cli: Cli, critic: str, options: tuple[str, ...], host: str):
    # Before, the row said "172.1 GiB per node for the critic's offloaded states" alone, where solve memory (and its
    # host_critic_gib) gives the critic's 131.5 GiB of it: now both from the same figure, in the same words.
    # Trinity 0.6: rank 0 alone loads the model on H100s, so that the critic's states outweigh the load (every rank's,
    # counted with no release named, 284.8 GiB with the reference model's shards, would be the figure)
    asked = ("--model", "8B", "--gpu", "h100", "--len", "32768", "--critic", critic, *options, "--trinity-version",
             "0.6")
    status, out, _ = cli(*asked, "--gpus", "8", "--host-ram", "512", "--json")
    (plan,) = [answer["plans"][0] for answer in json.loads(out)]
    memory = json.loads(cli("memory", *asked, "--gpus", "8", "--env", "--sp", str(plan["sp"]), "--json")[1])
    assert (status, plan["host_critic_gb"]) == (0, round(memory["host_critic_gib"], 2))
    said = " ".join(cli(*asked, "--gpus", "8", "--host-ram", "512", "--explain")[1].split())
    assert f"host memory {host}, within --host-ram 512 GiB" in said
    assert f"host memory: {host}" in " ".join(cli("memory", *asked, "--gpus", "8", "--env", "--sp",
                                                  str(plan["sp"]))[1].split())
