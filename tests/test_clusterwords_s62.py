"""Session 62, `solve cluster`'s words that an admin and a script trip on (review persona8's items 2, 4, 5 and 8): one
GPU bound in a reason, the jobs `--buy` leaves out named in full and where, the help's exit statuses, and a plan's
trainer nodes in `solve --json`."""
from __future__ import annotations

import json
from pathlib import Path

from cluster_api import place

from solver.render import json_schema
from solver.tables import load_catalog, load_fleet

ROOT = Path(__file__).resolve().parent.parent
CATALOG = load_catalog()

LONG_JOB_FLEET = """\
pools:
  - {name: h800, gpu: H800-80GB, nodes: 10, gpus_per_node: 8, host_ram_gb: 2048}
jobs:
  - {name: long, model: Llama-3.1-70B, max_model_len: 256k, rollout_gpus: 8, trinity_version: "0.6"}
"""
"""Trinity 0.6 named: its rank 0 alone loads the model on H800s (every rank's 8 loads of 262.6 GiB, counted with no
release named, would not fit 2048 GiB: s84)."""

REQUIRED_AND_FIVE_MORE = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}
jobs:
  - {name: r, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 1, required: true}
""" + "".join(f"  - {{name: c{i}, model: Qwen3-14B, max_model_len: 65536, rollout_gpus: 4}}\n" for i in range(1, 6))


def _fleet_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_reason_gives_the_trainer_one_gpu_bound_where_the_pool_has_more_than_the_planner_weighs(cli, tmp_path):
    # 80 GPUs, 72 beside the rollout, but the planner weighs at most 64 trainer GPUs: the reason said "h800 (up to 72
    # of its GPUs for the trainer, beside 8 rollout GPUs): ... within 64 GPUs" (with --buy, whose pools are raised to
    # a bound, "up to 928"). The bound it names is the planner's, once.
    fleet = _fleet_file(tmp_path, LONG_JOB_FLEET)
    head = ("h800 (beside 8 rollout GPUs): 262144 tokens is beyond what the tables and the memory model's estimates "
            "allow for Llama-3.1-70B on H800-80GB within 64 GPUs with 2048 GiB of host memory per node (the pool's "
            "host_ram_gb): the longest is 115712 on the 1024-token grid")
    status, out, _ = cli("cluster", str(fleet), "--json")
    assert status == 1 and json.loads(out)["unplaced"][0]["reason"].startswith(head)
    status, out, _ = cli("cluster", str(fleet), "--buy", "--json")
    assert status == 1 and json.loads(out)["fits_nowhere"][0]["reason"].startswith(head)


def test_the_jobs_buy_leaves_out_are_all_named_and_the_pools_as_they_are_where_nothing_is_bought(cli, tmp_path):
    # The required job fits the node as it is: nothing is bought, and none of the five 14B jobs (8 GPUs each) fits
    # beside it. The line named four ("and 1 more job") and "the pools with the nodes bought", where none were.
    fleet = _fleet_file(tmp_path, REQUIRED_AND_FIVE_MORE)
    status, out, _ = cli("cluster", str(fleet), "--buy")
    assert status == 0
    assert out.splitlines()[0] == "status: optimal; nothing to buy: the pools as they are place the required job (r)"
    assert " ".join(out.split()).endswith(
        "left out (not required): c1, c2, c3, c4, c5: no room for them beside the required jobs on the pools as they "
        "are; --required all buys for every job")  # s81
    status, out, _ = cli("cluster", str(fleet), "--buy", "--json")
    assert (status, json.loads(out)["gpus"], json.loads(out)["left_out"]) == (0, 0, ["c1", "c2", "c3", "c4", "c5"])


def test_the_help_gives_the_exit_statuses_of_buy_and_of_required_jobs_as_the_exit_table_does(cli):
    status, out, _ = cli("cluster", "--help")
    assert status == 0
    assert " ".join(out.split()).endswith(
        "Exit status: 0 every job placed (with --buy, every required job placed once the nodes it names are added, "
        "however many; a job not required and left out leaves it 0), 1 some job unplaced, or no placement "
        "(required jobs that do not all fit; with --buy, a required job that no purchase places, or no purchase "
        "found), 2 bad input, 74 a full disk, 130 Ctrl-C, 143 a request to end (SIGTERM), 141 a reader gone (| head), "
        "70 an internal error.")
    row = next(line for line in (ROOT / "docs/cli.md").read_text().splitlines() if line.startswith("| `solve cluster`"))
    assert row == (
        "| `solve cluster` | every job placed (with `--buy`, every required job placed once the nodes it names are "
        "added, however many; a job not required and left out leaves it 0) | some job unplaced, or no placement "
        "(required jobs that do not all fit; with `--buy`, a required job that no purchase places, or no purchase "
        "found) | bad input (b) | a full disk (d) |")
    # Required jobs that do not all fit: no placement, exit 1.
    status, out, _ = cli("cluster", str(ROOT / "docs/examples/required.yaml"), "--json")
    assert (status, json.loads(out)["status"], json.loads(out)["placements"]) == (1, "infeasible", [])


def test_a_plan_says_how_many_nodes_its_trainer_runs_on_as_the_text_does(cli):
    # plans[0].nodes is null without --rollout-gpus, while the text says "8 whole nodes of 8": a scheduler had to
    # work out ceil(gpus / node GPUs) itself. trainer_nodes gives it, from the function the text uses.
    ask = ("--model", "qwen3-32b", "--gpu", "h800", "--len", "32k", "--node-gpus", "8")
    status, out, _ = cli(*ask, "--gpus", "64", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert (status, plan["gpus"], plan["trainer_nodes"], plan["nodes"]) == (0, 64, 8, None)
    assert "Env + SP=2 on 64 of 64 GPUs, 8 whole nodes of 8" in cli(*ask, "--gpus", "64")[1]
    # Beside a rollout: the trainer's nodes, and all the job's.
    status, out, _ = cli(*ask, "--gpus", "56", "--rollout-gpus", "8", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert (status, plan["gpus"], plan["trainer_nodes"], plan["nodes"], plan["rollout_gpus"]) == (0, 56, 7, 8, 8)
    # Within one node: one.
    status, out, _ = cli("--model", "4B", "--gpu", "a100", "--len", "32k", "--gpus", "4", "--json")
    plan = json.loads(out)[0]["plans"][0]
    assert (status, plan["gpus"], plan["trainer_nodes"], plan["nodes"]) == (0, 4, 1, None)
    described = json.loads(json_schema("solve"))["$defs"]["Plan"]["properties"]["trainer_nodes"]["description"]
    assert described.startswith("the nodes the trainer runs on, of the query's node size (--node-gpus")


def test_a_placed_plan_counts_the_nodes_its_trainer_runs_on_in_its_pool(tmp_path: Path):
    # A trainer on two whole nodes with its rollout on a third (Llama-3.1-70B: 16 + 8 rollout GPUs on nodes of 8), and
    # one sharing a node with its rollout: the plan's trainer_nodes is the count of the placement's trainer nodes.
    fleet = _fleet_file(tmp_path, """\
pools:
  - {name: h800, gpu: H800-80GB, nodes: 4, gpus_per_node: 8}
jobs:
  - {name: big, model: Llama-3.1-70B, max_model_len: 32k, rollout_gpus: 8}
  - {name: small, model: Qwen3-0.6B, max_model_len: 8192, rollout_gpus: 1}
""")
    result = place(load_fleet(fleet, CATALOG), catalog=CATALOG, time_limit_s=30)
    counts = {placement.job: (placement.plan.trainer_nodes, len(placement.trainer_nodes), len(placement.nodes))
              for placement in result.placements}
    assert counts == {"big": (2, 2, 3), "small": (1, 1, 1)}
