"""`solve cluster --current PLACEMENT.json` (session 70): the jobs the fleet runs now stay on their nodes and GPUs
unless moving one places more priority (a CP-SAT stage after the placed priority); each job says whether it stays,
moves, starts or stops; a bad placement file is refused in one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from conftest import planner_answers_shared

import solver
from solver.results import index_range


@pytest.fixture(autouse=True)
def _planner_answers_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test here shares the planners' answers with the others of its process (`planner_answers_shared`)."""
    planner_answers_shared(monkeypatch)


Cli = Callable[..., tuple[int, str, str]]

POOLS = [{"name": "a100", "gpu": "A100-80GB", "nodes": 2, "gpus_per_node": 8},
         {"name": "h20", "gpu": "H20-96GB", "nodes": 1, "gpus_per_node": 8}]
JOBS = [{"name": "p06-a", "model": "Qwen3-0.6B", "max_model_len": 8192, "rollout_gpus": 1},
        {"name": "m4-a", "model": "Qwen3-4B", "max_model_len": 32768, "rollout_gpus": 2, "priority": 2},
        {"name": "m4-b", "model": "Qwen3-4B", "max_model_len": 16384, "rollout_gpus": 1},
        {"name": "c8-a", "model": "Qwen3-8B", "max_model_len": 32768, "rollout_gpus": 2},
        {"name": "c8-b", "model": "Qwen3-8B", "max_model_len": 98304, "rollout_gpus": 4},
        {"name": "q14-a", "model": "Qwen3-14B", "max_model_len": 32768, "rollout_gpus": 4, "priority": 2},
        {"name": "q14-b", "model": "Qwen3-14B", "max_model_len": 65536, "rollout_gpus": 4}]
"""A team's fleet, persona26's in small (s69): five of seven jobs placed; c8-b and q14-b left out for room."""

RUNNING = [("m4-a", "a100", [0], [0, 1, 2, 3]), ("m4-b", "a100", [0], [4, 5, 6]), ("p06-a", "a100", [1], [0, 1]),
           ("c8-a", "a100", [1], [2, 3, 4, 5, 6, 7]), ("q14-a", "h20", [0], [0, 1, 2, 3, 4, 5, 6, 7])]
"""Where the fleet's placement runs its jobs: (job, pool, nodes, GPUs)."""


def _write(path: Path, jobs: list[dict[str, object]], pools: list[dict[str, object]] = POOLS) -> Path:
    path.write_text(yaml.safe_dump({"pools": pools, "jobs": jobs}), encoding="utf-8")
    return path


def _raised(job: str, priority: int) -> list[dict[str, object]]:
    return [{**entry, "priority": priority} if entry["name"] == job else entry for entry in JOBS]


def _where(out: str) -> list[tuple[str, str, list[int], list[int]]]:
    return [(p["job"], p["pool"], p["nodes"], p["gpu_indexes"]) for p in json.loads(out)["placements"]]


@pytest.fixture
def current(cli: Cli, tmp_path: Path) -> Path:
    """The placement the fleet runs now: `solve cluster --json` of `JOBS`."""
    status, out, _ = cli("cluster", str(_write(tmp_path / "now.yaml", JOBS)), "--json")
    assert status == 1 and sorted(_where(out)) == sorted(RUNNING)
    path = tmp_path / "now.json"
    path.write_text(out, encoding="utf-8")
    return path


def test_a_priority_raised_moves_one_job_with_current_four_without(cli: Cli, tmp_path: Path, current: Path):
    # c8-b raised to priority 3 takes a whole node: without --current the placement reshuffles p06-a, m4-a, m4-b and
    # q14-a (c8-a stops either way); with it, only q14-a moves (out of h20, for c8-b), the others stay where they run.
    fleet = _write(tmp_path / "raised.yaml", _raised("c8-b", 3))
    moved = {job for job, *where in _where(cli("cluster", str(fleet), "--json")[1])
             if job in {r[0] for r in RUNNING} and (job, *where) not in RUNNING}
    assert moved == {"p06-a", "m4-a", "m4-b", "q14-a"}
    status, out, _ = cli("cluster", str(fleet), "--current", str(current), "--json")
    placed = json.loads(out)
    assert (status, placed["status"], placed["objective"]) == (1, "optimal", 9)
    assert [(p["job"], p["current"]) for p in placed["placements"]] == [
        ("p06-a", "stays"), ("m4-a", "stays"), ("m4-b", "stays"), ("c8-b", "starts"), ("q14-a", "moves")]
    assert [(u["job"], u.get("current")) for u in placed["unplaced"]] == [("c8-a", "stops"), ("q14-b", None)]
    text = cli("cluster", str(fleet), "--current", str(current))[1].splitlines()
    assert text[:2] == ["status: optimal; placed priority (of 11): 9, proven bound 9",
                        "running now: 3 stay, 1 moves, 1 stops; 1 starts"]
    on_node_1 = [line.split("│") for line in text if "│ 1     │" in line]
    assert [(cells[3].strip(), cells[-2].strip()) for cells in on_node_1] == [("p06-a", "stays"), ("q14-a", "moves")]


def test_the_same_fleet_keeps_every_job_and_the_text_says_so(cli: Cli, tmp_path: Path, current: Path):
    status, out, _ = cli("cluster", str(_write(tmp_path / "same.yaml", JOBS)), "--current", str(current))
    lines = out.splitlines()
    assert (status, lines[1]) == (1, "running now: 5 stay, 0 move, 0 stop; 0 start")
    assert "│ c8-b, q14-b │" in out  # the jobs left out do not run now: no (stops)


def test_a_job_whose_pool_is_gone_is_not_running_and_starts(cli: Cli, tmp_path: Path, current: Path):
    # Pool h20 is renamed: q14-a's entry names a pool the fleet lacks, so it runs nowhere now; the others stay.
    pools = [POOLS[0], {**POOLS[1], "name": "h20-new"}]
    status, out, _ = cli("cluster", str(_write(tmp_path / "renamed.yaml", JOBS, pools)), "--current", str(current),
                         "--json")
    placed = json.loads(out)
    assert (status, placed["unplaced"][0]["job"]) == (1, "c8-b")
    assert [(p["job"], p["pool"], p["current"]) for p in placed["placements"]] == [
        ("p06-a", "a100", "stays"), ("m4-a", "a100", "stays"), ("m4-b", "a100", "stays"), ("c8-a", "a100", "stays"),
        ("q14-a", "h20-new", "starts")]


def test_a_node_the_pool_no_longer_has_is_not_running(cli: Cli, tmp_path: Path, current: Path):
    # a100 down to one node: p06-a and c8-a ran on node 1, which is gone: they run there until they stop, and cannot
    # stay (s77: they were taken as not running, p06-a "starts"); m4-a and m4-b stay on node 0. q14-a moves: beside
    # it on h20 p06-a moves too, naming its node (priority 6, not 5: the placed priority comes first); c8-a stops.
    pools = [{**POOLS[0], "nodes": 1}, POOLS[1]]
    status, out, _ = cli("cluster", str(_write(tmp_path / "smaller.yaml", JOBS, pools)), "--current", str(current),
                         "--json")
    placed = json.loads(out)
    assert (status, placed["status"]) == (1, "optimal")
    assert [(p["job"], p["pool"], p["current"]) for p in placed["placements"]] == [
        ("p06-a", "h20", "moves"), ("m4-a", "a100", "stays"), ("m4-b", "a100", "stays"), ("q14-a", "h20", "moves")]
    assert (placed["placements"][0]["move_reason_code"], placed["placements"][0]["move_reason"]) == (
        "node-gone", "node 1 of pool a100, where it runs, is no longer in the pool (nodes: 1)")
    left_out = [(u["job"], u.get("current")) for u in placed["unplaced"]]
    assert left_out == [("c8-a", "stops"), ("c8-b", None), ("q14-b", None)]


def test_a_placement_made_before_schema_version_is_read_as_version_1(cli: Cli, tmp_path: Path, current: Path):
    # docs/json.md: JSON made before schema_version is version 1; a scheduler feeding back such a placement keeps its
    # jobs (s89: --current refused it, though ClusterResult read it).
    old = {key: value for key, value in json.loads(current.read_text(encoding="utf-8")).items()
           if key not in ("schema_version", "rft_solver_version")}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(old), encoding="utf-8")
    status, out, err = cli("cluster", str(_write(tmp_path / "same.yaml", JOBS)), "--current", str(path))
    assert (status, out.splitlines()[1], "error" in err) == (1, "running now: 5 stay, 0 move, 0 stop; 0 start", False)


def test_the_api_reads_the_same_placement(tmp_path: Path, current: Path):
    fleet = _write(tmp_path / "raised.yaml", _raised("c8-b", 3))
    bad = tmp_path / "bad.json"
    bad.write_text("[]", encoding="utf-8")
    with pytest.raises(solver.TableError) as refused:  # in words that name no command-line option
        solver.place(fleet, current=bad)
    assert str(refused.value) == (f"{bad}: not solve cluster --json's output (a JSON object with placements): a "
                                  "placement is what solve cluster --json printed")
    result = solver.place(fleet, current=current)
    assert [(p.job, p.current) for p in result.placements] == [
        ("p06-a", "stays"), ("m4-a", "stays"), ("m4-b", "stays"), ("c8-b", "starts"), ("q14-a", "moves")]
    assert "current" not in json.loads(solver.place(fleet).model_dump_json())["placements"][0]


@pytest.mark.parametrize(("content", "problem"), [
    ("status: optimal\n", ("not JSON (Expecting value: line 1 column 1 (char 0)): a placement is what solve "
                           "cluster --json printed")),
    ('[{"gpu": "A100-80GB"}]', ("not solve cluster --json's output (a JSON object with placements): a placement is "
                                "what solve cluster --json printed")),
    # s89: a file of another kind is named as other options' refusals name it, not only "not JSON"
    ("model: {model_path: m}\ntrainer: {}\n", ("not JSON (Expecting value: line 1 column 1 (char 0)) (this looks like "
                                               "a Trinity config, for --from-config): a placement is what solve "
                                               "cluster --json printed")),
    ('{"model_type": "qwen3", "vocab_size": 151936}', (
        "not solve cluster --json's output (a JSON object with placements) (this looks like a "
        "Hugging Face config.json, for --model-config): a placement is what solve cluster --json printed")),
    ('{"schema_version": 2, "placements": []}', ("schema_version is 2: this release of rft-solver reads 1 (place "
                                                 "the fleet again with this release's solve cluster --json)")),
    (('{"schema_version": 1, "placements": [{"job": "a", "pool": "p", "nodes": ["0"], "gpu_indexes": [0], '
      '"trainer_gpus": 1, "rollout_gpus": 0, "plan": {"max_model_len": 8192, "sp": 1, "offload": false}}]}'),
     "job a, nodes item 1: must be a whole number, got '0'"),
    (('{"schema_version": 1, "placements": [{"job": "a", "pool": "p", "nodes": [0], "gpu_indexes": [0, 1], '
      '"trainer_gpus": 1, "rollout_gpus": 1, "plan": {"max_model_len": 8192, "sp": 1, "offload": false}}, '
      '{"job": "b", "pool": "p", "nodes": [0], "gpu_indexes": [1], "trainer_gpus": 1, "rollout_gpus": 0, '
      '"plan": {"max_model_len": 8192, "sp": 1, "offload": false}}]}'),
     "jobs a and b both take GPU 1 of node 0 in pool p"),
], ids=["not-json", "planner-json", "trinity-config", "model-config", "schema-version", "node-as-text", "gpu-twice"])
def test_a_bad_current_file_is_refused_in_one_line(cli: Cli, tmp_path: Path, content: str, problem: str):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    status, out, err = cli("cluster", str(_write(tmp_path / "fleet.yaml", JOBS)), "--current", str(path))
    assert (status, out, err) == (2, "", f"solve cluster: error: --current {path}: {problem}\n")


def test_buy_with_current_is_refused(cli: Cli, tmp_path: Path, current: Path):
    status, out, err = cli("cluster", str(_write(tmp_path / "fleet.yaml", JOBS)), "--buy", "--current", str(current))
    assert (status, out) == (2, "")
    assert err == ("solve cluster: error: --buy with --current: --buy weighs no running jobs; run solve cluster "
                   "--current on the file with the nodes it names added\n")


def test_gpus_that_are_not_one_run_read_as_runs():
    assert [index_range(gpus) for gpus in ((5,), (4, 5, 6), (0, 1, 6, 7), (0, 2))] == ["5", "4-6", "0-1, 6-7", "0, 2"]


def test_a_job_left_out_beside_running_jobs_names_keeping_them_in_the_goals(cli: Cli, tmp_path: Path, current: Path):
    # The goals the no-room reason names are the placement's, in order: with --current, keeping running jobs where
    # they run comes after the placed priority; without it, the goals stay as they were. The jobs placed of priority
    # 1 are raised to 2, so that priority, not a tie (s82), leaves the other two out.
    fleet = _write(tmp_path / "same.yaml", [{**job, "priority": job.get("priority", 1) + 1}
                                            if job["name"] in ("p06-a", "m4-b", "c8-a") else job for job in JOBS])
    goals = ("after the jobs placed (the most priority in all, then {}the jobs earlier in the file where priorities "
             "tie, then length, then cost)")
    with_current = {u["job"]: u["reason"] for u in json.loads(
        cli("cluster", str(fleet), "--current", str(current), "--json")[1])["unplaced"]}
    without = {u["job"]: u["reason"] for u in json.loads(cli("cluster", str(fleet), "--json")[1])["unplaced"]}
    assert sorted(with_current) == sorted(without) == ["c8-b", "q14-b"]
    assert all(goals.format("running jobs kept where they run, then ") in reason for reason in with_current.values())
    assert all(goals.format("") in reason for reason in without.values())
