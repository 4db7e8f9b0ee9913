"""An infrastructure lead's slips planning a fleet: an unknown option after a flag is not told that the flag takes no
value; CP-SAT's and other tools' names for the search workers are told --workers; a pool's field given to a job,
a job's given to a pool, and a pool's price are told whose field it is, or that a pool has no price; a --current
placement saved with standard error's notes is told to save standard output alone; solve cluster's options that a
job's field gives name it; docs/guide.md lists the placement's goals with the tie of priority the file's order
breaks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from solver.cli.parser import SEED_WORDS
from solver.cluster import STAGES

USAGE = "usage: {} [options] (--help lists them)\n"


@pytest.mark.parametrize(("argv", "error"), [
    (["cluster", "fleet.yaml", "--json", "--seed", "3"],  # a hint of its own since smallslips47
     f"solve cluster: error: unrecognized arguments: --seed 3 ({SEED_WORDS})"),
    (["cluster", "fleet.yaml", "--no-widen", "--pool", "h20"],
     ("solve cluster: error: unrecognized arguments: --pool h20 (the file gives it: a job's pool, the one pool it may "
      "use and so the one --buy adds nodes to for it)")),
    (["--model", "4B", "--len", "32k", "--json", "--frobnicate"],
     "solve: error: unrecognized arguments: --frobnicate"),
    (["--model", "4B", "--json", "yes"],  # a word after a flag is still told the flag takes none
     "solve: error: unrecognized arguments: yes (--json takes no value: --json, or leave it out)"),
])
def test_an_unknown_option_after_a_flag_is_not_called_its_value(cli, argv, error):
    """`solve cluster f.yaml --json --seed 3` was told '(--json takes no value: --json, or leave it out)': the flag
    had no value given; the option after it is what is unknown."""
    prog = error.split(": error")[0]
    assert cli(*argv) == (2, "", USAGE.format(prog) + error + "\n")


@pytest.mark.parametrize("option", ["--threads", "--num-threads", "--num_workers", "--num-search-workers"])
def test_other_names_of_the_search_workers_are_told_workers(cli, option):
    """CP-SAT's num_workers (num_search_workers before it) and a thread count were refused with no guess."""
    error = f"solve cluster: error: unrecognized arguments: {option} 4 (did you mean --workers?)\n"
    assert cli("cluster", "fleet.yaml", option, "4") == (2, "", USAGE.format("solve cluster") + error)


JOB_FIELDS = ("name, max_model_len, rollout_gpus, priority, pool, required, train_batch_size, lora_rank, lora_targets, "
              "lora_exclude_modules, reference_model, critic, dpo, trinity_version, model, model_config")
POOL_FIELDS = ("name, gpu, nodes, gpus_per_node, host_ram_gb, gpu_memory_gb, gpu_memory_mib, gpu_interconnect, "
               "node_interconnect, down")


A_POOLS = "a pool's field, not a job's: to keep a job to a pool, give it pool: NAME"
A_JOBS = "a job's field, not a pool's: give it to the job, under jobs"
NO_PRICE = "a pool has no price: --buy adds the fewest GPUs, then nodes"
CHOSEN = "the placement chooses a job's trainer GPUs, nodes and settings; rollout_gpus keeps GPUs for its explorer"
LORA = "a LoRA job gives its adapter's rank: lora_rank: RANK (absent or 0: full fine-tuning)"
ALGORITHM = ("a job is counted as GRPO trains it: the actor and a reference model (none with lora_rank), no critic; "
             "critic: WHERE adds PPO's critic, dpo: true plans DPO and reference_model: false a run without one")


@pytest.mark.parametrize(("pool_extra", "job_extra", "field", "why"), [
    ("", ", gpu: H20", "gpu", A_POOLS),
    ("", ", host_ram_gb: 100", "host_ram_gb", A_POOLS),
    (", priority: 2", "", "priority", A_JOBS),
    (", max_model_len: 8k", "", "max_model_len", A_JOBS),
    (", cost_per_hour: 20", "", "cost_per_hour", NO_PRICE),
    ("", ", trainer_gpus: 4", "trainer_gpus", CHOSEN),
    # a GRPO user's job (s88): lora and algorithm_type got only the list of fields
    ("", ", lora: true", "lora", LORA),
    ("", ", algorithm_type: grpo", "algorithm_type", ALGORITHM),
])
def test_a_field_in_the_wrong_entry_says_whose_it_is(cli, tmp_path, pool_extra, job_extra, field, why):
    """A job's `gpu: H20` or a pool's `priority` got only the list of fields, where the field was the other entry's,
    and a pool's price no word that --buy weighs none."""
    fleet = tmp_path / "q.yaml"
    fleet.write_text(f"pools:\n  - {{name: h20, gpu: H20-96GB, nodes: 1, gpus_per_node: 8{pool_extra}}}\n"
                     f"jobs:\n  - {{name: j1, model: 4B, max_model_len: 8k{job_extra}}}\n", encoding="utf-8")
    entry, fields = ("line 2: pool h20", POOL_FIELDS) if pool_extra else ("line 4: job j1", JOB_FIELDS)
    error = f"{entry}: unknown field {field!r} ({why}; fields: {fields})"
    assert cli("cluster", str(fleet)) == (2, "", f"solve cluster: error: {fleet}: {error}\n")


def test_a_placement_saved_with_its_notes_is_told_to_save_standard_output_alone(cli, tmp_path):
    """`solve cluster f.yaml --json > now.json 2>&1` saves the gpu note after the JSON; --current said only 'not
    JSON (Extra data ...): a placement is what solve cluster --json printed', which it was."""
    fleet = tmp_path / "n.yaml"
    fleet.write_text("pools:\n  - {name: a, gpu: A100, nodes: 1, gpus_per_node: 8}\n"
                     "jobs:\n  - {name: j1, model: 4B, max_model_len: 8k, rollout_gpus: 0}\n", encoding="utf-8")
    status, out, err = cli("cluster", str(fleet), "--json")
    assert status == 0 and err.startswith("solve cluster: note: pool a: gpu 'A100' is taken as A100-80GB")
    now = tmp_path / "now.json"
    now.write_text(out + err, encoding="utf-8")
    lines = out.count("\n") + 1
    assert cli("cluster", str(fleet), "--current", str(now)) == (2, "", (
        f"solve cluster: error: --current {now}: not JSON (Extra data: line {lines} column 1 (char {len(out)})); "
        "solve's notes on standard error are in it too: a placement is what solve cluster --json printed on standard "
        "output alone (> FILE, not 2>&1)\n"))
    now.write_text(err + out, encoding="utf-8")  # the notes first, as a terminal may interleave them
    assert "solve's notes on standard error are in it too" in cli("cluster", str(fleet), "--current", str(now))[2]
    now.write_text(out, encoding="utf-8")
    assert cli("cluster", str(fleet), "--current", str(now))[0] == 0


@pytest.mark.parametrize(("argv", "field"), [
    (["--dpo"], "a job's dpo"),
    (["--lora-targets", "q_proj"], "a job's lora_targets"),
    (["--lora-exclude", ".*v_proj"], "a job's lora_exclude_modules"),
    (["--maximize", "len"], "a job's max_model_len as {at_least: N}, longer where a plan allows"),
    (["--critic", "resident"], "a job's critic"),
])
def test_a_planner_option_a_job_field_gives_names_the_field(cli, argv, field):
    """solve cluster named the job field of --critic and --lora-rank, but not of --dpo, --lora-targets and
    --lora-exclude, which jobs have given since (dpo, lora_targets, lora_exclude_modules), nor --maximize's."""
    owners = "solve" if argv[0] == "--maximize" else "solve, solve memory and solve map"
    error = (f"solve cluster: error: {argv[0]} is an option of {owners}, not of solve cluster (the file gives it: "
             f"{field})\n")
    assert cli("cluster", "fleet.yaml", *argv) == (2, "", USAGE.format("solve cluster") + error)


GUIDE_WORDS = {"priority": "the most priority placed", "jobs": "where priorities tie, the jobs earlier in the file",
               "length": "the longest contexts", "cost": "the shortest steps"}
"""The words docs/guide.md's list gives each of the default placement's goals (`solver.cluster.STAGES`' keys)."""


def test_the_guide_lists_the_placement_goals_in_order_with_the_tie_break():
    """docs/guide.md's 'Many jobs on a fleet' listed priority, then length, then cost: it left out the jobs earlier in
    the file that win a tie of priority, which decides which jobs run before length does (cluster.md's objectives)."""
    guide = (Path(__file__).resolve().parent.parent / "docs" / "guide.md").read_text(encoding="utf-8")
    section = guide.split("## Many jobs on a fleet", 1)[1].split("```", 1)[0]
    items = [" ".join(item.split()) for item in re.split(r"\n\d\. ", section)[1:]]
    goals = [stage for stage in STAGES if stage in GUIDE_WORDS]
    assert len(items) == len(goals) and all(GUIDE_WORDS[goal] in item for goal, item in zip(goals, items))
