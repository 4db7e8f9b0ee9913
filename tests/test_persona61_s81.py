"""A platform team sizing a shared cluster (s81, helper persona61): 14 jobs of Qwen3 0.6B to 30B-A3B on A100 and H20
nodes of 8. An earlier run's config for a job the placement leaves out is named as the file it is, with the same
warning as a config named for no job (a loop over the folder would start it); the purchase for every job is the
fewest GPUs, and one node fewer leaves the jobs' fewest GPUs above the fleet's; a LoRA job keeps the tables' plan
where the planner alone would take a cheaper estimate, as docs/cluster.md's tiers say."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

Cli = Callable[..., tuple[int, str, str]]

FLEET = """\
pools:
  - {name: a100, gpu: A100-80GB, nodes: %d, gpus_per_node: 8, host_ram_gb: 1024, node_interconnect: infiniband}
  - {name: h20, gpu: H20-96GB, nodes: 3, gpus_per_node: 8, host_ram_gb: 1024, node_interconnect: roce}
jobs:
  - {name: probe-0.6b, model: Qwen3-0.6B, max_model_len: 4k, rollout_gpus: 1}
  - {name: grpo-math-0.6b, model: Qwen3-0.6B, max_model_len: 8k, rollout_gpus: 1, train_batch_size: 64}
  - {name: grpo-math-1.7b, model: Qwen3-1.7B, max_model_len: 16k, rollout_gpus: 2, train_batch_size: 128}
  - {name: grpo-long-1.7b, model: Qwen3-1.7B, max_model_len: 64k, rollout_gpus: 2}
  - {name: ppo-code-4b, model: Qwen3-4B, max_model_len: 32k, rollout_gpus: 2, critic: resident, priority: 2}
  - {name: dpo-chat-4b, model: Qwen3-4B, max_model_len: 8k, rollout_gpus: 0, dpo: true, train_batch_size: 64}
  - {name: lora-agent-8b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2, lora_rank: 64}
  - {name: grpo-code-8b, model: Qwen3-8B, max_model_len: {at_least: 32k}, rollout_gpus: 4, priority: 3}
  - {name: dpo-lora-8b, model: Qwen3-8B, max_model_len: 16k, rollout_gpus: 0, dpo: true, lora_rank: 16}
  - {name: chat-14b, model: Qwen3-14B, max_model_len: 64k, rollout_gpus: 4, priority: 2, required: true}
  - {name: lora-14b, model: Qwen3-14B, max_model_len: 16k, rollout_gpus: 2, lora_rank: 32,
     lora_targets: 'q_proj,v_proj'}
  - {name: ppo-14b, model: Qwen3-14B, max_model_len: 16k, rollout_gpus: 4, critic: offloaded}
  - {name: moe-30b, model: Qwen3-30B-A3B, max_model_len: 32k, rollout_gpus: 4, pool: h20, required: true}
  - {name: moe-30b-long, model: Qwen3-30B-A3B, max_model_len: 64k, rollout_gpus: 8, priority: 5}
"""
"""The team's fleet, with %d A100 nodes (4 in the team's file): grpo-long-1.7b and ppo-14b find no room."""

EVERY_JOB = ("probe-0.6b,grpo-math-0.6b,grpo-math-1.7b,grpo-long-1.7b,ppo-code-4b,dpo-chat-4b,lora-agent-8b,"
             "grpo-code-8b,dpo-lora-8b,chat-14b,lora-14b,ppo-14b,moe-30b,moe-30b-long")
"""Every job of FLEET: with two required ones, --buy buys for those unless --required names the others too."""

TWO_JOBS = ("pools: [{name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 8}]\n"
            "jobs: [{name: huge, model: Qwen3-14B, max_model_len: 1048576},\n"
            "       {name: huge-too, model: Qwen3-14B, max_model_len: 1048576},\n"
            "       {name: ok, model: Qwen3-0.6B, max_model_len: 8192}]\n")
"""Two jobs no node holds and one that fits."""


def test_an_earlier_runs_config_for_a_job_left_out_is_named_as_a_file_not_to_start(cli: Cli, tmp_path: Path):
    # Was: "out still holds configs from an earlier run for huge.yaml, which this placement does not place", naming
    # the file as a job, and without the warning the note on a config named for no job gives: a scheduler looping
    # over the folder starts every .yaml in it, and a job left out has no GPUs of its own.
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "huge.yaml").write_text("mode: both\n", encoding="utf-8")
    path = tmp_path / "fleet.yaml"
    path.write_text(TWO_JOBS, encoding="utf-8")
    status, _, err = cli("cluster", str(path), "--json", "--emit-dir", str(out_dir))
    assert (status, err) == (1, (f"solve cluster: note: {out_dir} still holds huge.yaml, a config an earlier run "
                                 "wrote for a job this placement does not place: left in place; start only the "
                                 "configs this run wrote\n"))
    (out_dir / "huge-too.yaml").write_text("mode: both\n", encoding="utf-8")
    (out_dir / "gone.yaml").write_text("mode: both\n", encoding="utf-8")
    status, _, err = cli("cluster", str(path), "--json", "--emit-dir", str(out_dir))
    assert (status, err) == (1, (f"solve cluster: note: {out_dir} still holds huge.yaml, huge-too.yaml, configs "
                                 "earlier runs wrote for jobs this placement does not place: left in place; start "
                                 "only the configs this run wrote\n"
                                 f"solve cluster: note: {out_dir} also holds gone.yaml, named for no job of {path} "
                                 "(from an earlier run, of a job since renamed or removed?): left in place; start only "
                                 "the configs this run wrote\n"))
    assert sorted(p.name for p in out_dir.iterdir()) == ["gone.yaml", "huge-too.yaml", "huge.yaml", "ok.yaml"]
    assert (out_dir / "huge.yaml").read_text(encoding="utf-8") == "mode: both\n"


def test_a_config_in_another_case_than_its_jobs_is_named_where_case_tells_files_apart(cli: Cli, tmp_path: Path):
    # Was: no note. OK.yaml and Huge.yaml, an earlier run's (the file's jobs were OK and Huge then), are files of their
    # own beside ok.yaml where case tells names apart (here): a loop over the folder starts them with this run's.
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    for name in ("OK.yaml", "Huge.yaml"):
        (out_dir / name).write_text("mode: both\n", encoding="utf-8")
    path = tmp_path / "fleet.yaml"
    path.write_text(TWO_JOBS, encoding="utf-8")
    status, _, err = cli("cluster", str(path), "--json", "--emit-dir", str(out_dir))
    assert (status, err) == (1, (f"solve cluster: note: {out_dir} also holds Huge.yaml, OK.yaml, named for no job of "
                                 f"{path} (from an earlier run, of a job since renamed or removed?): left in place; "
                                 "start only the configs this run wrote\n"))
    assert sorted(p.name for p in out_dir.iterdir()) == ["Huge.yaml", "OK.yaml", "ok.yaml"]


def test_the_purchase_for_every_job_is_two_h20_nodes_and_one_node_more_is_too_few(cli: Cli, tmp_path: Path):
    path = tmp_path / "fleet.yaml"
    path.write_text(FLEET % 4, encoding="utf-8")
    # Asked under Trinity 0.6, which loads the model on rank 0 alone on H20s (FSDP2, compute capability 9): with no
    # release named every rank loads it, and the untied models' jobs need 3 H20 nodes.
    status, out, _ = cli("cluster", str(path), "--buy", "--required", EVERY_JOB, "--json", "--trinity-version", "0.6")
    answer = json.loads(out)
    assert (status, answer["status"], answer["gpus"], answer["nodes"], answer["bound"]) == (0, "optimal", 16, 2, 16)
    assert [(p["pool"], p["nodes_bought"], p["nodes_after"]) for p in answer["pools"]] == [("a100", 0, 4),
                                                                                           ("h20", 2, 5)]
    assert (len(answer["placements"]), answer["fits_nowhere"], answer["left_out"]) == (14, [], [])
    # One node more (8 GPUs, here an A100 one) cannot place them: at their fewest they take 66 GPUs.
    path.write_text(FLEET % 5, encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--minimize", "nodes", "--json", "--trinity-version", "0.6")
    answer = json.loads(out)
    assert (status, answer["status"], answer["placements"]) == (1, "infeasible", [])
    assert answer["unplaced"][0]["reason"] == ("the jobs do not all fit the fleet together: at their fewest they take "
                                               "66 GPUs, more than the fleet's 64; without --minimize nodes, as many "
                                               "as fit are placed")


def test_a_lora_job_keeps_the_tables_plan_where_solve_alone_takes_a_cheaper_estimate(cli: Cli, tmp_path: Path):
    # docs/cluster.md's rules: where the tables give a job a way in the pool, only their plans are used there. The
    # planner alone, asked the same question, takes the estimate at half the cost and names the tables' plan.
    path = tmp_path / "fleet.yaml"
    path.write_text("pools: [{name: a100, gpu: A100-80GB, nodes: 1, gpus_per_node: 4, host_ram_gb: 1024}]\n"
                    "jobs: [{name: lora-agent-8b, model: Qwen3-8B, max_model_len: 32k, rollout_gpus: 2,"
                    " lora_rank: 64}]\n", encoding="utf-8")
    status, out, _ = cli("cluster", str(path), "--json")
    placed = json.loads(out)["placements"][0]
    assert status == 0
    assert (placed["trainer_gpus"], placed["plan"]["env"], placed["plan"]["offload"], placed["plan"]["sp"],
            placed["plan"]["cost"], placed["plan"]["evidence"]) == (2, True, True, 2, 1.111, "inferred")
    status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "A100-80GB", "--gpus", "2", "--exact", "--len", "32k",
                         "--rollout-gpus", "2", "--node-gpus", "4", "--host-ram", "1024", "--lora-rank", "64", "--json")
    answer = json.loads(out)[0]
    best, measured = answer["plans"][0], answer["measured"]
    assert status == 0
    assert (best["env"], best["offload"], best["sp"], best["cost"], best["evidence"]) == (True, False, 2, 0.5555,
                                                                                          "estimated")
    assert (measured["env"], measured["offload"], measured["sp"], measured["cost"], measured["evidence"]) == (
        True, True, 2, 1.111, "inferred")


def test_a_field_given_twice_names_its_job_or_pool(cli: Cli, tmp_path: Path):
    # Was: "line 19: key 'priority' appears twice", where a line of a flow mapping may hold several jobs.
    path = tmp_path / "fleet.yaml"
    fleet = FLEET % 4
    for written, twice, said in [
            ("priority: 5}", "priority: 5, priority: 1}",
             "line 19: key 'priority' appears twice in the entry named 'moe-30b-long'"),
            ("host_ram_gb: 1024, node_interconnect: roce}", "host_ram_gb: 1024, node_interconnect: roce, nodes: 4}",
             "line 3: key 'nodes' appears twice in the entry named 'h20'"),
            ("{name: probe-0.6b,", "{name: probe-0.6b, name: probe,", "line 5: key 'name' appears twice")]:
        path.write_text(fleet.replace(written, twice), encoding="utf-8")
        assert cli("cluster", str(path)) == (2, "", f"solve cluster: error: {path}: {said}\n")
    # The document's own keys name no entry (a Trinity config's top-level name is its experiment's).
    path.write_text(f"name: fleet\n{fleet}jobs: []\n", encoding="utf-8")
    assert cli("cluster", str(path)) == (2, "", f"solve cluster: error: {path}: line 21: key 'jobs' appears twice\n")
