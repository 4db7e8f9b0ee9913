"""A cluster job on the tables' plan where `solve` gives it a cheaper estimate on its trainer GPUs names that plan
(`Placement.solve_best`, a line under its pool's table); ``--required all`` marks every job, and ``--buy``'s hint and
left-out line name it; ``--buy``'s status says the figure behind its bound (`PurchaseResult.fewest_gpus`,
`fleet_gpus`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import solver

Cli = Callable[..., tuple[int, str, str]]
EXAMPLES = Path(__file__).parent.parent / "docs" / "examples"

LORA_BESIDE_FULL = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: 2, gpus_per_node: 4, host_ram_gb: 1024}
jobs:
  - {name: lora-agent-8b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 64}
  - {name: full-8b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 0}
"""
"""A LoRA job whose tables' plan (inferred from full fine-tuning) costs twice solve's estimate, on a node of its own,
and a full fine-tuning job on the tables' documented plan, which solve picks too."""

PLAN_KEYS = ("gpus", "env", "offload", "sp", "max_model_len", "cost", "evidence", "memory_gb", "headroom_gb",
             "host_memory_gb")


def _file(tmp_path: Path, text: str, name: str = "fleet.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _plan(plan: dict[str, object]) -> dict[str, object]:
    return {key: plan[key] for key in PLAN_KEYS}


def test_a_lora_job_on_the_tables_plan_names_the_cheaper_estimate_solve_gives_it(cli: Cli, tmp_path: Path):
    path = _file(tmp_path, LORA_BESIDE_FULL)
    status, out, _ = cli("cluster", str(path), "--json")
    placed = {placement["job"]: placement for placement in json.loads(out)["placements"]}
    # Host memory: each of the 2 ranks loads the untied Qwen3-8B and its rank-64 adapter in fp32 with no release named
    # (s84), 31.2 GiB each: 103.8 with Offload's pinned shards (72.6 with rank 0 alone), 62.4 without.
    assert status == 0 and _plan(placed["lora-agent-8b"]["plan"]) == {
        "gpus": 2, "env": True, "offload": True, "sp": 2, "max_model_len": 32768, "cost": 1.111,
        "evidence": "inferred", "memory_gb": 48.73, "headroom_gb": 24.8, "host_memory_gb": 103.8}
    best = placed["lora-agent-8b"]["solve_best"]
    assert _plan(best) == {"gpus": 2, "env": True, "offload": False, "sp": 2, "max_model_len": 32768, "cost": 0.5555,
                           "evidence": "estimated", "memory_gb": 65.77, "headroom_gb": 7.76, "host_memory_gb": 62.4}
    assert "solve_best" not in placed["full-8b"]  # documented, and solve's pick too: left out
    # The plan solve gives the same job on the same GPUs (the persona's compare.py): the same figures.
    status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "A100-80GB", "--gpus", "2", "--exact", "--len", "32768",
                         "--rollout-gpus", "2", "--node-gpus", "4", "--host-ram", "1024", "--lora-rank", "64", "--json")
    assert status == 0 and _plan(json.loads(out)[0]["plans"][0]) == _plan(best)
    status, out, _ = cli("cluster", str(path))
    assert status == 0 and (
        "lora-agent-8b: solve's best on its 2 trainer GPUs at 32768 is Env + SP=2 (estimated; 0.50x the relative "
        "step time; 65.8 GiB per GPU predicted, 7.8 GiB to spare); placed on the tables' Env + Offload + SP=2 "
        "(inferred), as the cluster takes the tables' plans first") in " ".join(out.split())
    assert out.count("solve's best") == 1


def test_without_the_estimates_beside_the_tables_no_plan_is_named(cli: Cli, tmp_path: Path):
    path = _file(tmp_path, LORA_BESIDE_FULL)
    status, out, _ = cli("cluster", str(path), "--no-estimate", "--json")  # the tables alone: solve's would be theirs
    assert status == 0 and all("solve_best" not in placement for placement in json.loads(out)["placements"])
    status, out, _ = cli("cluster", str(path), "--estimate", "--json")  # every plan the estimates': placed on them
    placed = {placement["job"]: placement for placement in json.loads(out)["placements"]}
    assert status == 0 and all("solve_best" not in placement for placement in placed.values())
    assert (placed["lora-agent-8b"]["plan"]["offload"], placed["lora-agent-8b"]["plan"]["cost"],
            placed["lora-agent-8b"]["host_memory_gb"]) == (False, 0.5555, 62.4)  # 2 ranks loading, 31.2 each


def test_required_all_marks_every_job_unless_one_is_named_so(cli: Cli, tmp_path: Path):
    path = _file(tmp_path, LORA_BESIDE_FULL)
    status, out, _ = cli("cluster", str(path), "--required", "all", "--json")
    assert status == 0 and json.loads(out)["required"] == ["lora-agent-8b", "full-8b"]
    assert solver.place(path, required=["all"]).required == ("lora-agent-8b", "full-8b")
    named_all = _file(tmp_path, LORA_BESIDE_FULL.replace("name: full-8b", "name: all"), "named-all.yaml")
    status, out, _ = cli("cluster", str(named_all), "--required", "all", "--json")
    assert status == 0 and json.loads(out)["required"] == ["all"]  # the job of that name
    status, _, err = cli("cluster", str(path), "--required", "al")
    assert status == 2 and err == ("solve cluster: error: --required 'al': no job of the fleet is named so; did you "
                                   "mean all? its jobs: lora-agent-8b, full-8b; or all, for every job\n")  # a word


def _many_jobs(tmp_path: Path, huge: bool) -> Path:
    """Nine Qwen3-8B jobs of 8 GPUs at the fewest on one node of 8, j00 required; with `huge`, a tenth no nodes run."""
    lines = ["pools:", "  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}", "jobs:"]
    for index in range(9):
        must = ", required: true" if index == 0 else ""
        lines.append(f"  - {{name: j{index:02d}, model: Qwen3-8B, max_model_len: 32768, rollout_gpus: 4{must}}}")
    if huge:
        lines.append("  - {name: huge, model: Qwen3-0.6B, max_model_len: 2000000, rollout_gpus: 1}")
    return _file(tmp_path, "\n".join(lines) + "\n", f"many-{huge}.yaml")


def test_the_buy_hint_says_required_all_or_names_every_job_in_full(cli: Cli, tmp_path: Path):
    path = _many_jobs(tmp_path, huge=False)
    status, _, err = cli("cluster", str(path))
    assert status == 1 and err == (
        f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required all names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs)\n")
    path = _many_jobs(tmp_path, huge=True)  # huge is not named: --required all would require it too
    status, _, err = cli("cluster", str(path))
    assert status == 1 and err.splitlines()[-1] == (
        f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required JOBS names the "
        "fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs); JOBS (every job but j00, "
        "which is required already, and huge, which no number of nodes runs: --required all buys the same, but exits "
        "with status 1 for it): j01,j02,j03,j04,j05,j06,j07,j08")  # cluster92: why not --required all, said


def test_the_buy_hint_with_a_job_named_all_names_every_job_in_full(cli: Cli, tmp_path: Path):
    # A job named all: --required all would name that job alone, so JOBS names them, and says which it leaves out
    # (j00, the file's required job: "but j00"), or none where --required names j00 too ("every job", not "but ").
    path = _file(tmp_path, _many_jobs(tmp_path, huge=False).read_text(encoding="utf-8").replace("j08", "all"))
    tail = ("names the fewest GPUs, then nodes, to add to the pools (and the jobs no number of nodes runs); JOBS "
            "(every job{}): {}j01,j02,j03,j04,j05,j06,j07,all")
    command = f"solve cluster: note: to place the jobs left out too: solve cluster {path} --buy --required JOBS "
    status, _, err = cli("cluster", str(path))
    assert (status, err.splitlines()[-1]) == (1, command + tail.format(" but j00", ""))
    status, _, err = cli("cluster", str(path), "--required", "j00")
    assert (status, err.splitlines()[-1]) == (1, command + tail.format("", "j00,"))


def test_plain_buy_with_jobs_left_out_says_required_all_buys_for_them(cli: Cli, tmp_path: Path):
    path = _many_jobs(tmp_path, huge=False)
    status, out, _ = cli("cluster", str(path), "--buy")
    lines = out.splitlines()
    assert status == 0 and lines[0] == ("status: optimal; nothing to buy: the pools as they are place the required job "
                                        "(j00)")
    assert " ".join(lines[-2:]) == (
        "left out (not required): j01, j02, j03, j04, j05, j06, j07, j08: no room for them beside the required jobs on "
        "the pools as they are; --required all buys for every job")
    status, out, _ = cli("cluster", str(path), "--buy", "--required", "all", "--json")
    bought = json.loads(out)
    assert status == 0 and (bought["gpus"], bought["left_out"], len(bought["placements"])) == (64, [], 9)
    named_all = _file(tmp_path, path.read_text(encoding="utf-8").replace("name: j08", "name: all"), "all.yaml")
    status, out, _ = cli("cluster", str(named_all), "--buy")  # --required all would name that job alone: not said
    assert status == 0 and out.splitlines()[-1].endswith("on the pools as they are")


def test_buy_says_the_figure_behind_its_bound(cli: Cli, tmp_path: Path):
    status, out, _ = cli("cluster", str(EXAMPLES / "required.yaml"), "--buy")
    assert status == 0 and out.splitlines()[:2] == [
        ("status: optimal; to place the required jobs (code-8b, chat-14b, probe-4b), buy 8 GPUs (1 node), proven the "
         "fewest (at their fewest they take 17 GPUs, 1 more"),
        ("than the fleet's 16; the other 7 bought are for the pools they may use and their layouts (GPUs and host "
         "memory) to pack into the nodes)")]
    status, out, _ = cli("cluster", str(EXAMPLES / "required.yaml"), "--buy", "--json")
    bought = json.loads(out)
    assert status == 0 and (bought["gpus"], bought["bound"], bought["fewest_gpus"], bought["fleet_gpus"]) == (
        8, 8, 17, 16)
    # Two jobs of a trainer GPU and 7 rollout GPUs on a node of 8: the difference is all a purchase buys.
    path = _file(tmp_path, "pools:\n  - {name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}\njobs:\n"
                           "  - {name: a, model: Qwen3-0.6B, max_model_len: 4096, rollout_gpus: 7}\n"
                           "  - {name: b, model: Qwen3-0.6B, max_model_len: 4096, rollout_gpus: 7}\n")
    status, out, _ = cli("cluster", str(path), "--buy")
    assert status == 0 and out.splitlines()[0] == (
        "status: optimal; to place every job, buy 8 GPUs (1 node), proven the fewest (at their fewest they take 16 "
        "GPUs, 8 more than the fleet's 8)")
