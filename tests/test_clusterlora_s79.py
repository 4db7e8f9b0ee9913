"""A cluster job's ``lora_targets`` (s79, helper clusterlora): read by ``--lora-targets``' code
(`solver.query.given_lora_targets`), refused where it is, planned and written by --emit-dir as ``solve --lora-targets``
plans and emits it, a change of targets a change of training under --current, the training column naming them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from solver.tables.peft_match import targets_brief

Cli = Callable[..., tuple[int, str, str]]
JOBS = ("  - {name: qv, model: Qwen3-8B, max_model_len: 8192, rollout_gpus: 2, lora_rank: 16, lora_targets: %s}\n"
        "  - {name: al, model: Qwen3-8B, max_model_len: 8192, rollout_gpus: 2, lora_rank: 16}\n")


def fleet_file(folder: Path, targets: str = '"q_proj,v_proj"', name: str = "fleet.yaml") -> Path:
    """A one-node A100 pool and two LoRA 16 jobs of Qwen3-8B: qv adapting `targets`, al all-linear."""
    path = folder / name
    path.write_text("pools:\n  - {name: a100, gpu: A100-80GB, gpus_per_node: 8, nodes: 1}\njobs:\n"
                    + JOBS % targets)
    return path


def test_a_job_is_planned_and_emitted_with_its_targets(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("cluster", str(fleet_file(tmp_path)), "--time-limit", "10", "--json")
    plans = {placed["job"]: placed["plan"] for placed in json.loads(out)["placements"]}
    assert (status, plans["qv"]["lora_target_modules"], plans["al"]["lora_target_modules"]) == (
        0, ".*\\.(q_proj|v_proj)", None)
    status, out, _ = cli("cluster", str(fleet_file(tmp_path)), "--time-limit", "10", "--emit-dir",
                         str(tmp_path / "emit"))
    written = {name: (tmp_path / "emit" / f"{name}.yaml").read_text() for name in ("qv", "al")}  # as --emit trinity
    assert status == 0
    assert "  lora_configs: [{lora_rank: 16, target_modules: '.*\\.(q_proj|v_proj)'}]\n" in written["qv"]
    assert "  lora_configs: [{lora_rank: 16}]\n" in written["al"]
    assert "│ LoRA 16 on q_proj,v_proj, no ref │" in out and "│ LoRA 16, no ref                  │" in out


def test_a_change_of_targets_moves_the_job_under_current(cli: Cli, tmp_path: Path) -> None:
    _, running, _ = cli("cluster", str(fleet_file(tmp_path)), "--time-limit", "10", "--json")
    (tmp_path / "now.json").write_text(running)
    changed = fleet_file(tmp_path, '"q_proj,k_proj,v_proj"', "changed.yaml")
    status, out, _ = cli("cluster", str(changed), "--time-limit", "10", "--current", str(tmp_path / "now.json"),
                         "--json")
    placed = json.loads(out)["placements"]
    moves = {job["job"]: (job["current"], job.get("move_reason_code")) for job in placed}
    assert (status, moves) == (0, {"qv": ("moves", "training-changed"), "al": ("stays", None)})
    status, out, _ = cli("cluster", str(changed), "--time-limit", "10", "--current", str(tmp_path / "now.json"))
    assert ("moves: qv: it runs on node 0 of pool a100 (GPUs 0-3) now, "
            "and restarts as placed: the file asks lora_targets "
            "q_proj,k_proj,v_proj now; it runs with target_modules "
            ".*\\.(q_proj|v_proj)") in " ".join(out.split())  # the line wraps


FIX = ("give all-linear (Trinity's default: every linear layer but the output projection), module names separated by "
       "commas (q_proj,v_proj) or a regular expression that PEFT matches whole module names with "
       "(.*\\.(q_proj|v_proj))")


@pytest.mark.parametrize(("targets", "error"), [
    ('"foo_proj"', "lora_targets 'foo_proj' matches no module of Qwen3-8B (model.layers.N.self_attn.{q,k,v,o}_proj, "
                   "model.layers.N.mlp.{gate,up,down}_proj, model.embed_tokens and lm_head): " + FIX),
    ("'.*lm_head'", "lora_targets '.*lm_head' matches lm_head of Qwen3-8B, which all-linear leaves out and rft-solver "
                    "does not count: " + FIX),
    ('"("', "lora_targets '(' is no regular expression (missing ), unterminated subpattern at position 0): " + FIX),
])
def test_targets_solve_refuses_are_refused_in_one_line(cli: Cli, tmp_path: Path, targets: str, error: str) -> None:
    path = fleet_file(tmp_path, targets)
    status, out, err = cli("cluster", str(path), "--time-limit", "5")
    assert (status, out, err) == (2, "", f"solve cluster: error: {path}: job qv: {error}\n")


def test_targets_without_a_rank_are_refused(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "norank.yaml"
    path.write_text("pools:\n  - {name: a100, gpu: A100-80GB, gpus_per_node: 8, nodes: 1}\njobs:\n"
                    "  - {name: qv, model: Qwen3-8B, max_model_len: 8192, lora_targets: q_proj}\n")
    assert cli("cluster", str(path), "--time-limit", "5") == (
        2, "", (f"solve cluster: error: {path}: job qv: lora_targets 'q_proj' without LoRA: the targets are a LoRA "
                "adapter's; give a lora_rank above 0\n"))


def test_targets_are_said_briefly() -> None:
    assert (targets_brief(".*\\.(q_proj|v_proj)"), targets_brief(".*\\.o_proj"),
            targets_brief(".*\\.layers\\.[0-9]+\\.self_attn\\.q_proj")) == (
        "q_proj,v_proj", "o_proj", ".*\\.layers\\.[0-9]+\\.s...")


def test_an_unplaced_job_says_its_targets(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "small.yaml"
    path.write_text("pools:\n  - {name: a100, gpu: A100-80GB, gpus_per_node: 4, nodes: 1}\njobs:\n"
                    + JOBS.replace("name: al,", "name: al, priority: 3,") % '"q_proj,v_proj"')
    status, out, _ = cli("cluster", str(path), "--time-limit", "10", "--json")
    unplaced = json.loads(out)["unplaced"]
    assert (status, [(job["job"], job["lora_rank"], job["lora_target_modules"]) for job in unplaced]) == (
        1, [("qv", 16, ".*\\.(q_proj|v_proj)")])  # 1: a job left out
    status, out, _ = cli("cluster", str(path), "--time-limit", "10")
    words = " ".join(out.split())
    assert status == 1
    assert "│ qv │ LoRA 16 on q_proj,v_proj, no ref │ no room left in a100" in words
    assert words.count("; LoRA R on MODULES: its adapter on the job's lora_targets (the names, or its "
                       "target_modules regex), not all-linear") == 1  # the unplaced table's; al's is all-linear


def test_the_placed_table_notes_the_targets(cli: Cli, tmp_path: Path) -> None:
    status, out, _ = cli("cluster", str(fleet_file(tmp_path)), "--time-limit", "10")
    assert (status, " ".join(out.split()).count("LoRA R on MODULES: its adapter on the job's lora_targets")) == (0, 1)


def test_a_job_built_in_code_takes_its_targets() -> None:
    import solver

    pool = solver.Pool(name="a100", gpu="A100-80GB", gpus_per_node=8, nodes=1)
    job = solver.Job(name="qv", model="Qwen3-8B", max_model_len=8192, rollout_gpus=2, lora_rank=16,
                     lora_targets="o_proj")
    result = solver.place(solver.Fleet(pools=(pool,), jobs=(job,)), time_limit_s=10)
    assert [(placed.job, placed.plan.lora_target_modules) for placed in result.placements] == [("qv", ".*\\.o_proj")]
    unranked = solver.Fleet(pools=(pool,), jobs=(job.model_copy(update={"lora_rank": 0}),))
    with pytest.raises(solver.QueryError) as refused:
        solver.place(unranked, time_limit_s=10)
    assert str(refused.value) == ("job qv: lora_targets 'o_proj' without LoRA: the targets are a LoRA adapter's; "
                                  "give a lora_rank above 0")


def test_a_jobs_host_need_counts_its_adapter_on_its_targets_as_solve_does(cli: Cli, tmp_path: Path) -> None:
    # Before: the plan and the placement counted all-linear's adapter (109.9 GiB per node) for q_proj,v_proj. With no
    # release named both trainer ranks load the model and its adapter in fp32 at start-up (4 bytes a parameter each,
    # beside the actor's pinned shards), one rank's load more than rank 0 alone's 72.1 and 76.8: for q_proj,v_proj
    # 4 x (8.19e9 + 36 x 256 x (4096 + 4096 + 4096 + 1024)) bytes = 31.0 GiB, 103.1 (training holds 42.5).
    path = tmp_path / "host.yaml"
    path.write_text("pools:\n  - {name: a100, gpu: A100-80GB, gpus_per_node: 8, nodes: 1, host_ram_gb: 1000}\njobs:\n"
                    + (JOBS % '"q_proj,v_proj"').replace("lora_rank: 16", "lora_rank: 256"))
    status, out, _ = cli("cluster", str(path), "--time-limit", "10", "--json")
    placed = {job["job"]: job for job in json.loads(out)["placements"]}
    assert status == 0
    assert {name: (job["host_memory_gb"], job["plan"]["host_memory_gb"], job["plan"]["gpus"], job["plan"]["env"],
                   job["plan"]["offload"]) for name, job in placed.items()} == {
        "qv": (103.1, 103.1, 2, True, True), "al": (109.9, 109.9, 2, True, True)}
    for targets, host in (("q_proj,v_proj", 103.1), ("all-linear", 109.9)):
        status, out, _ = cli("--model", "Qwen3-8B", "--gpu", "A100-80GB", "--gpus", "2", "--exact", "--len", "8192",
                             "--lora-rank", "256", "--lora-targets", targets, "--rollout-gpus", "2", "--offload",
                             "--env", "--host-ram", "1000", "--json")
        assert (status, json.loads(out)[0]["plans"][0]["host_memory_gb"]) == (0, host)


def test_targets_given_as_a_list_are_told_the_text_to_give(cli: Cli, tmp_path: Path) -> None:
    path = fleet_file(tmp_path, "[q_proj, v_proj]")
    assert cli("cluster", str(path), "--time-limit", "5") == (
        2, "", (f"solve cluster: error: {path}: line 4: job qv, lora_targets: must be text, got ['q_proj', 'v_proj'] "
                "(a list: give 'q_proj,v_proj', the names separated by commas)\n"))
