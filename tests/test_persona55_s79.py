"""A platform engineer's shared fleet, s79 (persona55): each config ``solve cluster --emit-dir`` writes (and
`solver.placement_configs` gives) names under its plan the nodes of its pool the job was placed on, numbered as the
pool's table numbers them, and the GPUs of a node it shares, so that the file alone says where to start the job; a
job that runs now (``--current``) but that the file lacks (renamed by a slip, or removed) is named in a note on
stderr, since the placement takes its GPUs as free and may start another job on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

import solver
from solver.results import RunsAt
from solver.tables import current_jobs_gone
from solver.trinity import placed_on_words

FLEET = {"pools": [{"name": "a100", "gpu": "A100-80GB", "nodes": 3, "gpus_per_node": 8}],
         "jobs": [{"name": "long", "model": "Qwen3-14B", "max_model_len": 131072, "rollout_gpus": 8},
                  {"name": "small", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1},
                  {"name": "mid", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2},
                  {"name": "sft", "model": "Qwen3-8B", "max_model_len": 8192, "rollout_gpus": 0,
                   "train_batch_size": 64}]}
"""A 14B job on two whole nodes (its trainer on the first, its rollout on the second) and three jobs sharing the
third node."""

PLACED_ON = {"long": "# placed on nodes 0 and 1 of pool a100 (all their GPUs; its trainer on node 0)",
             "small": "# placed on node 2 of pool a100 (GPUs 0-1)",
             "mid": "# placed on node 2 of pool a100 (GPUs 2-5)",
             "sft": "# placed on node 2 of pool a100 (GPUs 6-7)"}


def _fleet_file(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.yaml"
    path.write_text(yaml.safe_dump(FLEET), encoding="utf-8")
    return path


def test_each_emitted_config_names_its_pool_nodes_and_shared_gpus_under_its_plan(cli, tmp_path: Path):
    status, out, _ = cli("cluster", str(_fleet_file(tmp_path)), "--emit-dir", str(tmp_path / "out"))
    assert status == 0
    assert "│ 0, 1  │ all  │ long " in out and "│ 2     │ 6-7  │ sft " in out  # the table's numbers, as the header's
    for job, line in PLACED_ON.items():
        lines = (tmp_path / "out" / f"{job}.yaml").read_text(encoding="utf-8").splitlines()
        assert lines[1].startswith("# plan: ")
        assert lines[2] == line


def test_the_api_configs_name_the_same_nodes(tmp_path: Path):
    path = _fleet_file(tmp_path)
    configs = solver.placement_configs(solver.place(path), path)
    assert {job: text.splitlines()[2] for job, text in configs.items()} == PLACED_ON


def test_placed_on_words_name_one_gpu_one_whole_node_and_a_trainer_on_every_node():
    assert placed_on_words("h20", (0,), (3,), (0,)) == "node 0 of pool h20 (GPU 3)"
    assert placed_on_words("h20", (4,), None, (4,)) == "node 4 of pool h20 (all its GPUs)"
    assert placed_on_words("a100", (1, 2, 5), None, (1, 2, 5)) == "nodes 1, 2 and 5 of pool a100 (all their GPUs)"
    assert placed_on_words("a100", (1, 2, 5), None, (1, 2)) == (
        "nodes 1, 2 and 5 of pool a100 (all their GPUs; its trainer on nodes 1 and 2)")


def test_a_fragment_made_for_no_placement_names_no_nodes():
    answer = solver.plan("Qwen3-4B", gpu="A100-80GB", budget_gpus=4, max_model_len=32768, rollout_gpus=2)[0]
    assert solver.trinity_config(answer).splitlines()[2].startswith("# evidence: documented")


def _placement_json(cli, path: Path) -> Path:
    status, out, _ = cli("cluster", str(path), "--json")
    assert status == 0
    now = path.with_name("now.json")
    now.write_text(out, encoding="utf-8")
    return now


@pytest.mark.parametrize("renamed", [("mid",), ("mid", "sft")])
def test_a_running_job_the_file_lacks_is_named_in_a_note_since_its_gpus_are_taken_as_free(
        cli, tmp_path: Path, renamed: tuple[str, ...]):
    now = _placement_json(cli, _fleet_file(tmp_path))
    instance = {**FLEET, "jobs": [{**job, "name": job["name"] + "-2"} if job["name"] in renamed else job
                                  for job in FLEET["jobs"]]}
    path = tmp_path / "renamed.yaml"
    path.write_text(yaml.safe_dump(instance), encoding="utf-8")
    status, out, err = cli("cluster", str(path), "--current", str(now), "--json")
    assert status == 0
    # The renamed jobs start on the GPUs of node 2 that the jobs of their old names run on
    gpus = {"mid": (2, 3, 4, 5), "sft": (6, 7)}
    assert {(placement["job"], placement["current"], tuple(placement["gpu_indexes"]))
            for placement in json.loads(out)["placements"] if placement["job"].endswith("-2")} == {
        (f"{job}-2", "starts", gpus[job]) for job in renamed}
    one = (f"solve cluster: note: --current {now} runs mid in pool a100, a job {path} lacks: the placement "
           "takes its GPUs as free, though it runs on them until stopped; stop it before a job starts there, or, if "
           "the job was renamed, name it mid again to keep it where it runs\n")
    both = (f"solve cluster: note: --current {now} runs mid, sft in pool a100, jobs {path} lacks: the placement "
            "takes their GPUs as free, though they run on them until stopped; stop them before a job starts there, "
            "or, if a job was renamed, give it its name again to keep it where it runs\n")
    assert " ".join(err.split()) == " ".join((one if renamed == ("mid",) else both).split())


def test_a_running_job_the_file_keeps_gets_no_such_note(cli, tmp_path: Path):
    path = _fleet_file(tmp_path)
    now = _placement_json(cli, path)
    status, _, err = cli("cluster", str(path), "--current", str(now), "--json")
    assert (status, err) == (0, "")
    assert current_jobs_gone(now, solver.load_fleet(path)) == ()


def test_a_moving_job_on_whole_nodes_names_its_trainer_s_node_where_it_runs_now(tmp_path: Path):
    # s88: long, its trainer on node 0 and its rollout on node 1, moves off node 1 (down): where it runs now said
    # "nodes 0 and 1 of pool a100 (all their GPUs)", without the trainer's node its placement's own words give
    now = solver.place(_fleet_file(tmp_path))
    down = tmp_path / "down.yaml"
    down.write_text(yaml.safe_dump({**FLEET, "pools": [{**FLEET["pools"][0], "nodes": 4, "down": [1]}]}),
                    encoding="utf-8")
    result = solver.place(down, current=now)
    [moved] = [placement for placement in result.placements if placement.current == "moves"]
    assert (moved.job, moved.moved_from) == ("long", RunsAt(pool="a100", nodes=(0, 1), gpu_indexes=tuple(range(8)),
                                                            trainer_nodes=(0,)))
    assert solver.placement_configs(result, down)["long"].splitlines()[3] == (
        "# now: moves: it runs on nodes 0 and 1 of pool a100 (all their GPUs; its trainer on node 0) now, and")
