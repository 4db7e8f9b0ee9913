"""A cluster operator re-planning a shared fleet after a node fails (persona79, s85): a pool's nodes down given by an
operator's word for them (`down_nodes`, `failed`, `drained`) is told `down`; a job pinned to a node or GPUs by hand
(`node`, `gpu_indexes`) is told that the placement chooses them and that `--current` keeps a running job where it
runs; a purchase's bound, and required jobs that do not fit, count the fleet's GPUs on its nodes up and say so."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

POOL_FIELDS = ("name, gpu, nodes, gpus_per_node, host_ram_gb, gpu_memory_gb, gpu_memory_mib, gpu_interconnect, "
               "node_interconnect, down")
JOB_FIELDS = ("name, max_model_len, rollout_gpus, priority, pool, required, train_batch_size, lora_rank, lora_targets, "
              "lora_exclude_modules, reference_model, critic, dpo, trinity_version, model, model_config")


def _fleet(tmp_path: Path, pool_extra: str = "", job_extra: str = "") -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(f"pools:\n  - {{name: a100, gpu: A100-80GB, nodes: 4, gpus_per_node: 8{pool_extra}}}\n"
                    f"jobs:\n  - {{name: j, model: 4B, max_model_len: 4096{job_extra}}}\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("field", ["down_nodes", "failed", "drained", "Failed-Nodes", "cordoned", "offline"])
def test_nodes_down_by_an_operators_word_are_told_down(cli: Callable[..., tuple[int, str, str]], tmp_path: Path,
                                                       field: str):
    path = _fleet(tmp_path, pool_extra=f", {field}: [2]")
    status, out, err = cli("cluster", str(path))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {path}: line 2: pool a100: unknown field {field!r} (did you mean down? "
                   f"fields: {POOL_FIELDS})\n")


def test_a_failed_field_in_a_job_is_no_guess_of_down(cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    # down is a pool's field: a job's `failed` is no slip for it.
    path = _fleet(tmp_path, job_extra=", failed: true")
    status, _, err = cli("cluster", str(path))
    assert status == 2
    assert err == f"solve cluster: error: {path}: line 4: job j: unknown field 'failed' (fields: {JOB_FIELDS})\n"


@pytest.mark.parametrize("extra", [", node: 3", ", node_index: 3", ", gpu_indexes: [0, 1, 2, 3]",
                                   ", CUDA_VISIBLE_DEVICES: '0,1'"])
def test_a_job_pinned_to_a_node_or_gpus_is_told_current_keeps_a_running_job(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, extra: str):
    path = _fleet(tmp_path, job_extra=extra)
    field = extra.split(":")[0].removeprefix(", ")
    status, out, err = cli("cluster", str(path))
    assert (status, out) == (2, "")
    assert err == (f"solve cluster: error: {path}: line 4: job j: unknown field {field!r} (the placement chooses a "
                   "job's nodes and GPUs: to keep a running job where it runs, give solve cluster --current "
                   "PLACEMENT.json (an earlier solve cluster --json); to keep it to a pool, pool: NAME; fields: "
                   f"{JOB_FIELDS})\n")


def test_a_pools_node_is_still_told_nodes(cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text("pools:\n  - {name: a100, gpu: A100-80GB, node: 4, gpus_per_node: 8}\n"
                    "jobs:\n  - {name: j, model: 4B, max_model_len: 4096}\n", encoding="utf-8")
    status, _, err = cli("cluster", str(path))
    assert status == 2
    assert err == (f"solve cluster: error: {path}: line 2: pool a100: unknown field 'node' (did you mean nodes? "
                   f"fields: {POOL_FIELDS})\n")


def _down_fleet(tmp_path: Path, nodes: int, down: int, jobs: list[str]) -> Path:
    path = tmp_path / "down.yaml"
    listed = "".join(f"  - {{name: {name}, {job}}}\n" for name, job in zip("abc", jobs, strict=False))
    path.write_text(f"pools:\n  - {{name: a100, gpu: A100-80GB, nodes: {nodes}, gpus_per_node: 8, down: [{down}]}}\n"
                    f"jobs:\n{listed}", encoding="utf-8")
    return path


WHOLE_NODE = "model: 14B, max_model_len: 65536, rollout_gpus: 4"  # 4 trainer + 4 rollout GPUs: a node of 8
FIVE_GPUS = "model: 4B, max_model_len: 98304, rollout_gpus: 1"  # 4 trainer + 1 rollout


def test_a_purchase_counts_the_fleets_gpus_on_nodes_up(cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    # A node of two down: the fleet's 8 GPUs the bound compares with are those up, not its 16.
    status, out, _ = cli("cluster", str(_down_fleet(tmp_path, 2, 1, [WHOLE_NODE] * 2)), "--buy", "--no-widen")
    assert status == 0
    assert out.splitlines()[0] == ("status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest (at "
                                   "their fewest they take 16 GPUs, 8 more than the fleet's 8 on nodes up)")
    status, out, _ = cli("cluster", str(_down_fleet(tmp_path, 3, 2, [FIVE_GPUS] * 3)), "--buy", "--no-widen")
    assert status == 0
    assert " ".join(out.splitlines()[:2]) == (
        "status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest (at their fewest they take 15 of "
        "the fleet's 16 GPUs on nodes up; the 8 bought are for the pools they may use and their layouts (GPUs and host "
        "memory) to pack into the nodes)")


def test_required_jobs_that_do_not_fit_count_the_fleets_gpus_on_nodes_up(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    status, out, _ = cli("cluster", str(_down_fleet(tmp_path, 2, 1, [WHOLE_NODE] * 2)), "--required", "all", "--json")
    assert status == 1
    assert json.loads(out)["unplaced"][0]["reason"] == (
        "the required jobs (a, b) do not all fit the fleet together: at their fewest they take 16 GPUs, more than the "
        "fleet's 8 on nodes up; --buy names the nodes to add for them")
    status, out, _ = cli("cluster", str(_down_fleet(tmp_path, 3, 2, [FIVE_GPUS] * 3)), "--required", "all", "--json")
    assert status == 1
    assert json.loads(out)["unplaced"][0]["reason"] == (
        "the required jobs (a, b, c) do not all fit the fleet together: at their fewest they take 15 of the fleet's 16 "
        "GPUs on nodes up, but their layouts do not pack into the nodes; --buy names the nodes to add for them")


PLACEMENT_KIND = ("solve cluster --json's output, a placement: give it with --current, beside the cluster file, to "
                  "keep its jobs where they run")
PURCHASE_KIND = ("solve cluster --buy --json's output, what to buy: set each pool's nodes to its nodes_after in the "
                 "cluster file")


@pytest.mark.parametrize(("buy", "kind"), [((), PLACEMENT_KIND), (("--buy",), PURCHASE_KIND)])
def test_a_placement_given_as_the_cluster_file_is_told_what_it_is(
        cli: Callable[..., tuple[int, str, str]], tmp_path: Path, buy: tuple[str, ...], kind: str):
    # The operator gives yesterday's --json where the cluster file goes (solve cluster yesterday.json): JSON reads
    # as YAML, so its fields were refused one by one, a placement's pool told it is a job's field, and no more.
    fleet = _down_fleet(tmp_path, 2, 1, [WHOLE_NODE])
    _, out, _ = cli("cluster", str(fleet), "--json", *buy)
    placement = tmp_path / "yesterday.json"
    placement.write_text(out, encoding="utf-8")
    status, out, err = cli("cluster", str(placement))
    assert (status, out) == (2, "")
    # cluster92: said first and alone, not after its fields refused one by one (44 of them, in a 550-character line)
    assert err == f"solve cluster: error: {placement}: this looks like {kind}\n"


def test_a_placement_beside_the_cluster_file_is_told_current(cli: Callable[..., tuple[int, str, str]], tmp_path: Path):
    # solve cluster today.yaml yesterday.json: --current forgotten; a second YAML file is told one is read (s88).
    fleet = _down_fleet(tmp_path, 2, 1, [WHOLE_NODE])
    status, out, err = cli("cluster", str(fleet), "yesterday.json")
    assert (status, out) == (2, "")
    assert err == ("usage: solve cluster [options] (--help lists them)\nsolve cluster: error: unrecognized arguments: "
                   "yesterday.json (a placement is named after its option: --current PLACEMENT.json)\n")
    status, _, err = cli("cluster", str(fleet), "other.yaml")
    assert status == 2
    assert err.endswith("solve cluster: error: unrecognized arguments: other.yaml (solve cluster reads one FILE.yaml: "
                        "join the files in one, or run it once for each)\n")
